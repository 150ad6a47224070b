// "Sweep expired…": a dry run first, a modal question listing what it would delete, then the deletion of
// exactly that list: the real sweep presents the dry run's token, and the server deletes only the files
// it listed (a file changed since is kept and reported). When the list changed in between, the server
// answers with the new list instead of deleting, and the question is asked again.
import * as vscode from "vscode";
import { sweepArgs } from "../args";
import { sweepQuestion, sweepSummary, sweptReport } from "../present";
import type { SweepResult } from "../protocol";
import { type Client, command } from "./command";

/** Times the question is asked again when the list keeps changing under it. */
const MAX_ASKS = 3;

export function register(deps: { client: Client; refresh: () => void }): vscode.Disposable[] {
  return [command("kinMemory.sweep", () => sweep(deps), (e) => deps.client.report(e))];
}

async function sweep({ client, refresh }: { client: Client; refresh: () => void }): Promise<void> {
  let plan: SweepResult = await client.exec("kin.memory.sweep", sweepArgs(true));
  for (let asked = 0; asked < MAX_ASKS; asked++) {
    if (!plan.swept?.length || !plan.token) {
      void vscode.window.showInformationMessage(`Kin Memory: ${sweepSummary([], plan.kept, true)}`);
      return;
    }
    const { message, detail } = sweepQuestion(plan.swept, plan.kept);
    const prefix = asked ? "The expired memories changed since the list was shown. " : "";
    // "Keep them" first: the dialog's default button (Enter) is the choice that deletes nothing.
    const answer = await vscode.window.showWarningMessage(prefix + message, { modal: true, detail },
      { title: "Keep them" }, { title: "Delete" }); // the first is the primary button
    if (answer?.title !== "Delete") return;
    const token = plan.token;
    const res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Kin Memory: sweeping", cancellable: true },
      (_p, cancel) => client.exec("kin.memory.sweep", sweepArgs(false, token), cancel),
    );
    if (!res.token) {
      void vscode.window.showInformationMessage(`Kin Memory: ${sweptReport(res.swept ?? [], res.kept, res.changed ?? [])}`);
      refresh();
      return;
    }
    plan = res; // nothing was deleted: the answer is the current list, with its own token
  }
  void vscode.window.showWarningMessage("Kin Memory: the expired memories keep changing; nothing was deleted. Try again later.");
}
