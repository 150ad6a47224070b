// "Delete this memory" (the quick fix on an expired episode or session): the server's code action names
// this command with `{uri, path}` instead of a file deletion the editor would apply at once. It asks in a
// modal (saying that history keeps the memory; "Keep it" is the default button), then deletes through the memory tool (`kin.memory.tool {command: "delete"}`), so the tool's
// guard and audit log apply, and closes the memory's editors when they hold no unsaved changes.
import * as vscode from "vscode";
import { confirmDeleteArg, deleteToolInput } from "../args";
import { deleteQuestion, printablePath } from "../present";
import { type Client, command } from "./command";

export const CONFIRM_DELETE = "kinMemory.confirmDelete";
// Both plain items (a close affordance would become the dialog's Cancel, leaving Delete the primary):
// the first is the primary button, the one Enter presses.
const KEEP: vscode.MessageItem = { title: "Keep it" };
const DELETE: vscode.MessageItem = { title: "Delete" };

export function register(deps: { client: Client; refresh: () => void }): vscode.Disposable[] {
  return [command(CONFIRM_DELETE, (arg) => confirmDelete(deps, arg), (e) => deps.client.report(e))];
}

async function confirmDelete({ client, refresh }: { client: Client; refresh: () => void }, arg: unknown): Promise<void> {
  const target = confirmDeleteArg(arg);
  if (!target) throw new Error("the delete quick fix came without the memory to delete");
  const shown = printablePath(target.path);
  const { message, detail } = deleteQuestion(target.path);
  // "Keep it" first: the dialog's default button (Enter) is the choice that changes nothing.
  const answer = await vscode.window.showWarningMessage(message, { modal: true, detail }, KEEP, DELETE);
  if (answer !== DELETE) return;
  const res = await client.exec("kin.memory.tool", deleteToolInput(target.path));
  if (res.isError) throw new Error(`${shown} was not deleted: ${res.content}`);
  await closeEditorsOf(target.uri);
  void vscode.window.setStatusBarMessage(`Kin Memory: deleted ${shown}`, 4000);
  refresh();
}

/** Closes the tabs showing the deleted file, unless they hold unsaved text (that stays the user's). */
async function closeEditorsOf(uri: string): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) =>
    t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri && !t.isDirty);
  if (tabs.length) await vscode.window.tabGroups.close(tabs);
}
