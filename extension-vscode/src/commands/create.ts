// "New memory…": category, then a path; the file is created through the server's memory tool (so the
// tool's guard and write rules apply) and opened below the server's store root.
import * as path from "node:path";
import * as vscode from "vscode";
import { createToolInput, defaultNewMemoryName, newMemoryPath, newMemoryText, titleFromPath } from "../args";
import { CATEGORIES, CATEGORY_INFO } from "../present";
import type { StoreRoot } from "../root";
import { type Client, command } from "./command";

interface Deps {
  client: Client;
  root: Pick<StoreRoot, "current">;
  refresh: () => void;
}

export function register(deps: Deps): vscode.Disposable[] {
  return [command("kinMemory.newMemory", () => newMemory(deps), (e) => deps.client.report(e))];
}

async function newMemory({ client, root, refresh }: Deps): Promise<void> {
  const cat = await vscode.window.showQuickPick(
    CATEGORIES.map((c) => ({ label: c, detail: CATEGORY_INFO[c].detail })),
    { title: "New memory: category", placeHolder: "What kind of memory is it?" },
  );
  if (!cat) return;
  const category = cat.label;
  const initial = defaultNewMemoryName(category);
  const name = await vscode.window.showInputBox({
    title: `New ${category} memory`, prompt: "Path inside the store (.md is added)", value: initial,
    valueSelection: [initial.length, initial.length],
    validateInput: (v) => { const r = newMemoryPath(v); return "error" in r ? r.error : undefined; },
  });
  if (name === undefined) return;
  const target = newMemoryPath(name);
  if ("error" in target) throw new Error(target.error);
  const res = await client.exec("kin.memory.tool", createToolInput(target.path, newMemoryText(category, titleFromPath(target.path))));
  if (res.isError) throw new Error(res.content);
  const store = root.current;
  if (store === undefined) throw new Error("the server has not reported its store root; see the output");
  const uri = vscode.Uri.file(path.join(store, ...target.path.slice("/memories/".length).split("/")));
  const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  const end = editor.document.lineCount;
  editor.selection = new vscode.Selection(end, 0, end, 0);
  refresh();
}
