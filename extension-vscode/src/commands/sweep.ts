// "Sweep expired…": a dry run first, then the deletion only after the user confirms the list.
import * as vscode from "vscode";
import { sweepArgs } from "../args";
import { sweepSummary } from "../present";
import { type Client, command } from "./command";

export function register(deps: { client: Client; refresh: () => void }): vscode.Disposable[] {
  return [command("kinMemory.sweep", () => sweep(deps), (e) => deps.client.report(e))];
}

async function sweep({ client, refresh }: { client: Client; refresh: () => void }): Promise<void> {
  const dry = await client.exec("kin.memory.sweep", sweepArgs(true));
  if (!dry.swept?.length) {
    void vscode.window.showInformationMessage(`Kin Memory: ${sweepSummary([], dry.kept, true)}`);
    return;
  }
  const items = dry.swept.map((p) => ({ label: p }));
  const confirm = await vscode.window.showQuickPick(
    [{ label: `$(trash) Delete ${dry.swept.length} expired memories`, alwaysShow: true }, { label: "", kind: vscode.QuickPickItemKind.Separator }, ...items],
    { title: `Sweep expired: ${sweepSummary(dry.swept, dry.kept, true)}`, placeHolder: "Pick the first entry to delete them all; Escape cancels" },
  );
  if (!confirm || !confirm.label.startsWith("$(trash)")) return;
  const res = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Kin Memory: sweeping", cancellable: true },
    (_p, token) => client.exec("kin.memory.sweep", sweepArgs(false), token),
  );
  void vscode.window.showInformationMessage(`Kin Memory: ${sweepSummary(res.swept ?? [], res.kept, false)}`);
  refresh();
}
