// "Mark reviewed": touches a stale project fact, from the tree's inline action, the code lens or the
// active editor.
import * as vscode from "vscode";
import { markReviewedArgs, uriFromArg } from "../args";
import { type Client, command } from "./command";

export function register(deps: { client: Client; refresh: () => void }): vscode.Disposable[] {
  return [command("kinMemory.markReviewed", (arg) => markReviewed(deps, arg), (e) => deps.client.report(e))];
}

async function markReviewed({ client, refresh }: { client: Client; refresh: () => void }, arg?: unknown): Promise<void> {
  let uri: string | undefined;
  if (arg instanceof vscode.Uri) uri = arg.toString();
  else uri = uriFromArg(arg);
  uri ??= vscode.window.activeTextEditor?.document.uri.toString();
  if (!uri) {
    void vscode.window.showWarningMessage("Kin Memory: open a memory file to mark it reviewed.");
    return;
  }
  await client.exec("kin.memory.markReviewed", markReviewedArgs(uri));
  void vscode.window.setStatusBarMessage("Kin Memory: marked reviewed", 3000);
  refresh();
}
