// The tree's context menu on a memory: copy its `/memories/…` path, reveal it in the Explorer, delete it
// (asks, then the memory tool deletes it), change its category (through the tool), re-stamp every memory
// of its workspace (a proposal to review), and the tree's filter (category, status, workspace, age).
import * as vscode from "vscode";
import { CATEGORIES, filterFrom, filterItems } from "../present";
import type { MemoryEntry } from "../protocol";
import type { MemoryTree } from "../tree";
import { type Client, command } from "./command";

interface Deps {
  client: Client;
  refresh: () => void;
  tree: Pick<MemoryTree, "filter" | "setFilter">;
}

function memoryOf(arg: unknown): MemoryEntry | undefined {
  const o = arg as { memory?: MemoryEntry } | undefined;
  return o?.memory && typeof o.memory.path === "string" ? o.memory : undefined;
}

export function register(deps: Deps): vscode.Disposable[] {
  const report = (e: unknown) => deps.client.report(e);
  const on = (id: string, run: (m: MemoryEntry) => unknown) =>
    command(id, (arg) => { const m = memoryOf(arg); return m ? run(m) : undefined; }, report);
  return [
    on("kinMemory.copyPath", async (m) => {
      await vscode.env.clipboard.writeText(m.path);
      void vscode.window.setStatusBarMessage(`Kin Memory: copied ${m.path}`, 3000);
    }),
    on("kinMemory.revealInExplorer", (m) => vscode.commands.executeCommand("revealInExplorer", vscode.Uri.parse(m.uri))),
    on("kinMemory.deleteMemory", (m) => vscode.commands.executeCommand("kinMemory.confirmDelete", { uri: m.uri, path: m.path })),
    on("kinMemory.changeCategory", (m) => changeCategory(deps, m)),
    on("kinMemory.restampMemory", (m) => {
      if (!m.workspace || m.workspace === "global") {
        void vscode.window.showInformationMessage(`Kin Memory: ${m.path} has no workspace stamp to change.`);
        return;
      }
      return vscode.commands.executeCommand("kinMemory.restamp", { stamp: m.workspace });
    }),
    command("kinMemory.filterTree", () => filterTree(deps), report),
    command("kinMemory.clearTreeFilter", () => deps.tree.setFilter(filterFrom([])), report),
  ];
}

async function changeCategory({ client, refresh }: Deps, m: MemoryEntry): Promise<void> {
  const to = await vscode.window.showQuickPick(CATEGORIES.filter((c) => c !== m.category), { title: `Category of ${m.path}` });
  if (!to) return;
  const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.parse(m.uri)));
  // The frontmatter's own `category:` line (before the closing fence), replaced through the memory tool.
  const line = /^---\r?\n(?:(?!---)[^\n]*\n)*?(category:[^\r\n]*)/.exec(text)?.[1];
  if (!line) throw new Error(`${m.path} has no category line in its frontmatter; add one in the editor`);
  const res = await client.exec("kin.memory.tool", { command: "str_replace", path: m.path, old_str: line, new_str: `category: ${to}`, workspace: "none" });
  if (res.isError) throw new Error(res.content);
  void vscode.window.setStatusBarMessage(`Kin Memory: ${m.path} is now ${to}`, 3000);
  refresh();
}

async function filterTree({ tree }: Deps): Promise<void> {
  const picked = await vscode.window.showQuickPick(filterItems(tree.filter), {
    title: "Show memories that are…", canPickMany: true, placeHolder: "nothing picked: every memory",
  });
  if (picked) tree.setFilter(filterFrom(picked));
}
