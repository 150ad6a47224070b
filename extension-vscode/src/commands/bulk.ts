// Bulk fixes: "Fix all safe problems in the store…" (fences and categories) and the KM301 quick fix
// "Re-stamp every memory stamped …" / "Make every memory stamped … global". The server answers one
// proposal; it is reviewed like a reflection's (diffs open, then Apply all / Apply selected… / Discard).
import * as vscode from "vscode";
import type { ProposalResult } from "../protocol";
import { type Client, command } from "./command";
import { REVIEW_PROPOSAL } from "./proposal_review";

interface Deps {
  client: Client;
}

export function register(deps: Deps): vscode.Disposable[] {
  const report = (e: unknown) => deps.client.report(e);
  return [
    command("kinMemory.fixAll", () => fixAll(deps), report),
    command("kinMemory.restamp", (arg) => restamp(deps, arg), report),
  ];
}

async function review(proposal: ProposalResult, nothing: string): Promise<void> {
  if (!proposal.changes.length) {
    void vscode.window.showInformationMessage(`Kin Memory: ${nothing}`);
    return;
  }
  await vscode.commands.executeCommand(REVIEW_PROPOSAL, proposal);
}

async function fixAll({ client }: Deps): Promise<void> {
  const proposal = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Kin Memory: looking for safe fixes" },
    () => client.exec("kin.memory.fixAll", {}),
  );
  await review(proposal, "no memory has a safe fix to make.");
}

async function restamp({ client }: Deps, arg: unknown): Promise<void> {
  const o = (arg && typeof arg === "object" ? arg : {}) as { stamp?: unknown; to?: unknown };
  if (typeof o.stamp !== "string" || !o.stamp) return;
  let to = typeof o.to === "string" ? o.to : undefined;
  if (!to) {
    to = await vscode.window.showInputBox({
      title: `Re-stamp every memory stamped ${o.stamp}`,
      prompt: "Where is the repository now? Its folder's path, or global to make the memories global.",
      value: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "",
      ignoreFocusOut: true,
    });
    if (!to) return;
  }
  const proposal = await client.exec("kin.memory.restamp", { stamp: o.stamp, to });
  await review(proposal, `no memory is stamped ${o.stamp} any more.`);
}
