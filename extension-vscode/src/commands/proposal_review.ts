// The review of a proposal, shared by every pass (reflection, initialization, consolidation) and the bulk
// fixes: every change opens at once in one changes editor (read-only virtual documents), and then a
// notification beside the diffs (not a modal over them: the person reads the diffs while choosing)
// offers Apply all, Apply selected… (chosen by index, never by path) or Discard. A notification has no
// default button: Enter and Escape write nothing (Escape hides it into the notification center; a status
// bar item says a proposal waits and opens the center), and a notification closed without a choice keeps
// the proposal (the server keeps it 7 days).
import * as vscode from "vscode";
import { applyReport, changeLabel, passName, proposalTitle, reviewNotice } from "../present";
import type { ProposalChange, ProposalResult } from "../protocol";
import type { Client } from "./command";

const SCHEME = "kin-memory-proposal";
export const REVIEW_PROPOSAL = "kinMemory.reviewProposal";
const APPLY_ALL = "Apply all";
const APPLY_SELECTED = "Apply selected…";
const DISCARD = "Discard";

/** The review's virtual documents and the two things a review does with them. */
export function createReview(): { review: Review; disposables: vscode.Disposable[] } {
  const texts = new Map<string, string>();
  const changed = new vscode.EventEmitter<vscode.Uri>();
  // Read-only virtual documents: the review can never be mistaken for the memory itself.
  const provider = vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
    onDidChange: changed.event,
    provideTextDocumentContent: (uri) => texts.get(uri.toString()) ?? "",
  });
  const review: Review = {
    show: (proposal) => showProposal(texts, changed, proposal),
    close: (proposal) => closeProposal(texts, proposal),
  };
  return { review, disposables: [changed, provider] };
}

export interface Review {
  show(proposal: ProposalResult): Promise<void>;
  close(proposal: ProposalResult): Promise<void>;
}

/** Whether a provider and a model are set; if not, says which settings to set and offers to open them. */
export async function configured(): Promise<boolean> {
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

/**
 * The review of any model pass's proposal (reflection, initialization, consolidation): every diff open
 * at once, then Apply all, Apply selected…, or Discard beside them; no choice keeps the proposal.
 */
export async function decide(
  { client, refresh }: { client: Client; refresh: () => void }, review: Review, proposal: ProposalResult,
): Promise<void> {
  if (!proposal.changes.length) {
    void vscode.window.showInformationMessage(`Kin Memory: ${passName(proposal.source)} proposes no changes. ${proposal.summary}`);
    return;
  }
  await reviewProposal({ client, refresh }, review, proposal);
}

/** Shows a proposal's diffs, then asks beside them: Apply all, Apply selected…, Discard. */
export async function reviewProposal(
  { client, refresh }: { client: Client; refresh: () => void }, review: Review, proposal: ProposalResult,
): Promise<void> {
  await review.show(proposal); // the diffs first: the question is about them
  const question = reviewNotice(proposal);
  // Escape hides the notification into the notification center without an answer: while the question is
  // open, a status bar item says so and opens the center, where its buttons still wait.
  const waiting = vscode.window.createStatusBarItem("kinMemory.proposalWaiting", vscode.StatusBarAlignment.Left, 49);
  waiting.name = "Kin Memory proposal";
  waiting.text = "$(diff) Kin Memory: proposal waiting";
  waiting.tooltip = "Kin Memory: a proposal's diffs are open and nothing is written yet. Click to choose: Apply all, Apply selected… or Discard.";
  waiting.command = "notifications.showList";
  waiting.show();
  try {
    await decideShown({ client, refresh }, review, proposal, question);
  } finally {
    waiting.dispose();
  }
}

/** The question beside the shown diffs, until the person applies, discards or closes it. */
async function decideShown(
  { client, refresh }: { client: Client; refresh: () => void }, review: Review, proposal: ProposalResult, question: string,
): Promise<void> {
  for (;;) {
    const choice = await vscode.window.showInformationMessage(question, APPLY_ALL, APPLY_SELECTED, DISCARD);
    if (choice === undefined) return; // closed without a choice: nothing written, the proposal stays
    if (choice === DISCARD) {
      await client.exec("kin.memory.discardProposal", { id: proposal.id });
      await review.close(proposal);
      void vscode.window.showInformationMessage("Kin Memory: proposal discarded; nothing was written.");
      return;
    }
    // Changes are chosen by their index, never by path: a rename and a create can share one.
    let changes: number[] | undefined;
    if (choice === APPLY_SELECTED) {
      const picks = await vscode.window.showQuickPick(
        proposal.changes.map((c, index) => ({ label: changeLabel(c), picked: true, index })),
        // The diffs stay usable while choosing (scroll them, then come back to the list).
        { canPickMany: true, title: "Apply which changes?", ignoreFocusOut: true },
      );
      if (!picks?.length) continue; // back to the choices; nothing written
      changes = picks.map((p) => p.index);
    }
    const result = await client.exec("kin.memory.applyProposal", changes ? { id: proposal.id, changes } : { id: proposal.id });
    await review.close(proposal);
    const message = applyReport(result.applied.length, changes?.length ?? proposal.changes.length, result.conflicts, proposal.changes.length);
    if (result.conflicts.length) void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
    refresh();
    return;
  }
}

/** The virtual document of one side of a change (undefined where the file does not exist on that side). */
function side(
  texts: Map<string, string>, changed: vscode.EventEmitter<vscode.Uri>, proposal: ProposalResult, path: string,
  which: "before" | "after", text: string | null,
): vscode.Uri | undefined {
  if (text === null) return undefined;
  const uri = vscode.Uri.from({ scheme: SCHEME, path, query: `${proposal.id}&${which}` });
  texts.set(uri.toString(), text);
  changed.fire(uri);
  return uri;
}

/** Every change of the proposal in one changes editor: a created memory as added, a deleted one as removed. */
async function showProposal(
  texts: Map<string, string>, changed: vscode.EventEmitter<vscode.Uri>, proposal: ProposalResult,
): Promise<void> {
  const resources = proposal.changes.map((c: ProposalChange) => {
    const target = c.kind === "rename" && c.newPath ? c.newPath : c.path;
    const before = side(texts, changed, proposal, c.path, "before", c.before);
    const after = side(texts, changed, proposal, target, "after", c.kind === "rename" ? (c.after ?? c.before) : c.after);
    return [after ?? before, before, after] as const;
  });
  await vscode.commands.executeCommand("vscode.changes", proposalTitle(proposal), resources);
}

/** After Apply or Discard the review would show what no longer is: close its editor, forget its texts. */
async function closeProposal(texts: Map<string, string>, proposal: ProposalResult): Promise<void> {
  const title = proposalTitle(proposal);
  const ours = (uri: unknown) => uri instanceof vscode.Uri && uri.scheme === SCHEME && uri.query.startsWith(`${proposal.id}&`);
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => {
    const input = t.input;
    if (input instanceof vscode.TabInputTextDiff) return ours(input.modified) || ours(input.original);
    if (input instanceof vscode.TabInputText) return ours(input.uri);
    return t.label === title || t.label.startsWith(`${title} (`); // the changes editor: "<title> (2 files)"
  });
  if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
  for (const key of [...texts.keys()]) {
    if (key.includes(`${proposal.id}%26`) || key.includes(`${proposal.id}&`)) texts.delete(key);
  }
}
