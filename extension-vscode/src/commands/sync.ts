// "Sync the store through git" (`kin.memory.sync` with a progress notification; the remote's address
// asked once, when the store has none yet) and "Open both versions side by side", the command behind
// KM800's quick fix: both sides of a sync conflict as read-only virtual documents in a diff editor.
import * as vscode from "vscode";
import { uriFromArg } from "../args";
import type { SyncParams, SyncResult } from "../protocol";
import { conflictSides, remoteProblem, secretWarning, syncMessage } from "../sync_present";
import { type Client, command } from "./command";

export const COMPARE_CONFLICT = "kinMemory.compareConflict";
const CONFLICT_SCHEME = "kin-memory-conflict";

interface Deps {
  client: Client;
  refresh: () => void;
  root: { current: string | undefined };
}

export function register(deps: Deps): vscode.Disposable[] {
  const report = (e: unknown) => deps.client.report(e);
  // A content provider's documents are read-only: neither side can be mistaken for the memory file.
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const texts = new Map<string, string>();
  const provider = vscode.workspace.registerTextDocumentContentProvider(CONFLICT_SCHEME, {
    onDidChange: changed.event,
    provideTextDocumentContent: (uri) => texts.get(uri.toString()) ?? "",
  });
  const side = (vpath: string, label: string, text: string): vscode.Uri => {
    const uri = vscode.Uri.from({ scheme: CONFLICT_SCHEME, path: vpath, query: new URLSearchParams({ side: label }).toString() });
    texts.set(uri.toString(), text);
    changed.fire(uri); // a side shown before shows the versions of now
    return uri;
  };

  const compare = async (arg: unknown) => {
    const uri = uriFromArg(arg) ?? vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri) {
      void vscode.window.showWarningMessage("Kin Memory: open a memory with a sync conflict to compare its versions.");
      return;
    }
    const v = await deps.client.exec("kin.memory.conflictVersions", { uri });
    const sides = conflictSides(v);
    await vscode.commands.executeCommand("vscode.diff", side(v.path, sides.mine.label, sides.mine.text),
      side(v.path, sides.theirs.label, sides.theirs.text), sides.title);
  };

  return [changed, provider, command("kinMemory.sync", () => sync(deps), report), command(COMPARE_CONFLICT, compare, report)];
}

async function sync({ client, refresh, root }: Deps): Promise<void> {
  await client.ensure();
  let res = await syncing(client, {});
  if (res.needsRemote) {
    const remote = await vscode.window.showInputBox({
      title: "Sync the store through git",
      prompt: res.summary.join(" "),
      placeHolder: "a folder, or an ssh or https URL such as git@example.com:me/memory.git",
      ignoreFocusOut: true,
      validateInput: remoteProblem,
    });
    if (remote === undefined) return;
    res = await syncing(client, { remote: remote.trim() });
  }
  refresh();
  void warnOfSecrets(res, root.current);
  const { text, warn } = syncMessage(res);
  if (!warn) {
    void vscode.window.showInformationMessage(text);
    return;
  }
  const answer = await vscode.window.showWarningMessage(text, "Show problems");
  if (answer) await vscode.commands.executeCommand("workbench.actions.view.problems");
}

/** Secrets that went to the remote: a warning of its own, which opens the memory or the Problems panel. */
async function warnOfSecrets(res: SyncResult, root: string | undefined): Promise<void> {
  const text = secretWarning(res);
  if (!text) return;
  const first = res.secrets[0];
  const open = root && first ? (res.secrets.length === 1 ? "Open it" : "Open the first") : undefined;
  const answer = await vscode.window.showWarningMessage(text, ...(open ? [open] : []), "Show problems");
  if (answer === "Show problems") await vscode.commands.executeCommand("workbench.actions.view.problems");
  else if (answer && root && first) {
    await vscode.window.showTextDocument(vscode.Uri.file(root + first.replace(/^\/memories/, "")));
  }
}

function syncing(client: Client, params: SyncParams): Thenable<SyncResult> {
  // Not cancellable: once started, the server takes a sync to its end (its push included).
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Kin Memory: syncing the store through git" },
    () => client.exec("kin.memory.sync", params),
  );
}
