// "Reflect on transcript…": one reflection pass over a transcript the user picks, returned by the server
// as a proposal. Nothing is written until the user has seen the diffs and chosen. Every change opens at
// once in one changes editor (read-only virtual documents), and a notification beside it asks: Apply
// all, Apply selected…, or Discard (see proposal_review.ts). Applying writes exactly the reviewed text on
// disk (no model request); an open editor that is not modified follows the file, as VS Code reloads it.
import * as vscode from "vscode";
import { reflectArgs } from "../args";
import { sessionPick } from "../present";
import type { ProposalResult } from "../protocol";
import type { StoreRoot } from "../root";
import { type Client, command } from "./command";
import * as passes from "./passes";
import { type Review, REVIEW_PROPOSAL, configured, createReview, decide, reviewProposal } from "./proposal_review";

export function register(deps: { client: Client; root: StoreRoot; refresh: () => void }): vscode.Disposable[] {
  const { client } = deps;
  const { review, disposables } = createReview();
  return [
    ...disposables,
    command("kinMemory.reflect", (file?: unknown) => reflect(deps, review, file), (e) => client.report(e)),
    ...passes.register(deps, review),
    // The same review for any proposal (bulk fixes): internal, hidden from the palette.
    command(REVIEW_PROPOSAL, (proposal: unknown) => reviewProposal(deps, review, proposal as ProposalResult), (e) => client.report(e)),
  ];
}

async function pickTranscript(client: Client, arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg; // "Reflect on this file" from the Explorer
  // The newest Claude Code or Codex session of this workspace first, as `kin-memory reflect --latest`,
  // with its date, size and first prompt (the server reads them, bounded).
  const latest = await client.exec("kin.memory.latestSession", {}).catch(() => undefined);
  if (latest?.path) {
    const newest = sessionPick(latest);
    const choice = await vscode.window.showQuickPick([newest, { label: "Choose a transcript file…", detail: "" }], {
      title: "Reflect on transcript",
    });
    if (!choice) return undefined;
    if (choice === newest) return vscode.Uri.file(latest.path);
  }
  const picked = await vscode.window.showOpenDialog({
    title: "Reflect on transcript", openLabel: "Reflect", canSelectMany: false,
    filters: { Transcripts: ["jsonl", "json", "txt", "md"], "All files": ["*"] },
  });
  return picked?.[0];
}

async function reflect(
  { client, refresh }: { client: Client; refresh: () => void }, review: Review, arg: unknown,
): Promise<void> {
  if (!(await configured())) return; // before asking for a file: nothing could be done with it
  const file = await pickTranscript(client, arg);
  if (!file) return;
  const proposal = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Kin Memory: reflecting on the transcript", cancellable: true },
    (_progress, token) => client.exec("kin.memory.reflect", reflectArgs(file.scheme === "file" ? file.fsPath : file.toString()), token),
  );
  await decide({ client, refresh }, review, proposal);
}
