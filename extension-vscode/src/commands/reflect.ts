// "Reflect on transcript…": one reflection pass over a transcript the user picks, returned by the server
// as a proposal. Nothing is written until the user has seen each change's diff and chosen: Apply all,
// Apply selected…, or Discard. Applying writes exactly the reviewed text on disk (no model request); an
// open editor that is not modified follows the file, as VS Code reloads it.
import * as vscode from "vscode";
import { reflectArgs } from "../args";
import { changeLabel, conflictSummary } from "../present";
import type { ProposalChange, ProposalResult } from "../protocol";
import { type Client, command } from "./command";

const SCHEME = "kin-memory-proposal";

export function register(deps: { client: Client; refresh: () => void }): vscode.Disposable[] {
  const { client } = deps;
  const texts = new Map<string, string>();
  const changed = new vscode.EventEmitter<vscode.Uri>();
  // Read-only virtual documents: the review can never be mistaken for the memory itself.
  const provider = vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
    onDidChange: changed.event,
    provideTextDocumentContent: (uri) => texts.get(uri.toString()) ?? "",
  });
  const show = (proposal: ProposalResult, change: ProposalChange) => showDiff(texts, changed, proposal, change);
  return [
    changed,
    provider,
    command("kinMemory.reflect", (file?: unknown) => reflect(deps, show, file), (e) => client.report(e)),
  ];
}

/** Whether a provider and a model are set; if not, says which settings to set and offers to open them. */
async function configured(): Promise<boolean> {
  const settings = vscode.workspace.getConfiguration("kinMemory.reflection");
  const missing = (["provider", "model"] as const).filter((key) => !settings.get<string>(key));
  if (!missing.length) return true;
  const names = missing.map((key) => `kinMemory.reflection.${key}`).join(" and ");
  const open = await vscode.window.showErrorMessage(
    `Kin Memory: reflection is not configured yet. Set ${names} (and, for a local or other endpoint, kinMemory.reflection.baseUrl).`,
    "Open Settings",
  );
  if (open) await vscode.commands.executeCommand("workbench.action.openSettings", "kinMemory.reflection");
  return false;
}

async function pickTranscript(arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg; // "Reflect on this file" from the Explorer
  const picked = await vscode.window.showOpenDialog({
    title: "Reflect on transcript", openLabel: "Reflect", canSelectMany: false,
    filters: { Transcripts: ["jsonl", "json", "txt", "md"], "All files": ["*"] },
  });
  return picked?.[0];
}

async function reflect(
  { client, refresh }: { client: Client; refresh: () => void },
  show: (p: ProposalResult, c: ProposalChange) => Promise<void>,
  arg: unknown,
): Promise<void> {
  if (!(await configured())) return; // before asking for a file: nothing could be done with it
  const file = await pickTranscript(arg);
  if (!file) return;
  const proposal = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Kin Memory: reflecting on the transcript", cancellable: true },
    (_progress, token) => client.exec("kin.memory.reflect", reflectArgs(file.scheme === "file" ? file.fsPath : file.toString()), token),
  );
  if (!proposal.changes.length) {
    void vscode.window.showInformationMessage(`Kin Memory: the reflection proposes no changes. ${proposal.summary}`);
    return;
  }
  for (const change of proposal.changes) await show(proposal, change);
  const choice = await vscode.window.showInformationMessage(
    `Kin Memory: the reflection proposes ${proposal.changes.length} change${proposal.changes.length === 1 ? "" : "s"} (their diffs are open). Nothing is written until you apply.`,
    { modal: true, detail: proposal.summary },
    "Apply all", "Apply selected…", "Discard",
  );
  if (choice === "Discard" || choice === undefined) {
    await client.exec("kin.memory.discardProposal", { id: proposal.id });
    void vscode.window.showInformationMessage("Kin Memory: proposal discarded; nothing was written.");
    return;
  }
  let paths: string[] | undefined;
  if (choice === "Apply selected…") {
    const picks = await vscode.window.showQuickPick(
      proposal.changes.map((c) => ({ label: changeLabel(c), picked: true, path: c.path })),
      { canPickMany: true, title: "Apply which changes?" },
    );
    if (!picks) return; // the proposal stays listed; nothing written
    paths = picks.map((p) => p.path);
  }
  const result = await client.exec("kin.memory.applyProposal", paths ? { id: proposal.id, paths } : { id: proposal.id });
  const message = `Kin Memory: applied ${result.applied.length} of ${paths?.length ?? proposal.changes.length} changes.${conflictSummary(result.conflicts)}`;
  if (result.conflicts.length) void vscode.window.showWarningMessage(message);
  else void vscode.window.showInformationMessage(message);
  refresh();
}

async function showDiff(
  texts: Map<string, string>, changed: vscode.EventEmitter<vscode.Uri>, proposal: ProposalResult, change: ProposalChange,
): Promise<void> {
  const side = (which: "before" | "after", text: string | null) => {
    const uri = vscode.Uri.from({ scheme: SCHEME, path: change.path, query: `${proposal.id}&${which}` });
    texts.set(uri.toString(), text ?? "");
    changed.fire(uri);
    return uri;
  };
  const after = change.kind === "rename" ? change.before : change.after;
  await vscode.commands.executeCommand(
    "vscode.diff", side("before", change.before), side("after", after), `Proposed: ${changeLabel(change)}`, { preview: false },
  );
}
