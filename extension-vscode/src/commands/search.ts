// "Search memories…": a quick pick fed by the server's recall as the user types.
import * as vscode from "vscode";
import { searchArgs } from "../args";
import { searchItems } from "../present";
import { type Client, command } from "./command";

const TYPING_PAUSE_MS = 150;

export function register(deps: { client: Client }): vscode.Disposable[] {
  const { client } = deps;
  return [command("kinMemory.search", () => search(client), (e) => client.report(e))];
}

async function search(client: Client): Promise<void> {
  await client.ensure();
  type Item = vscode.QuickPickItem & { uri?: string; toggle?: boolean };
  let everywhere = false; // the operator's view: every workspace's memories
  const pick = vscode.window.createQuickPick<Item>();
  pick.title = "Search memories";
  pick.placeholder = "Type words to recall (filters: category:episodic status:stale age:<30)";
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  let seq = 0;
  let timer: NodeJS.Timeout | undefined;
  const run = async (query: string) => {
    const mine = ++seq;
    if (!query.trim()) {
      pick.items = [];
      pick.busy = false;
      return;
    }
    pick.busy = true;
    try {
      const res = await client.exec("kin.memory.search", searchArgs(query, 20, everywhere));
      if (mine !== seq) return;
      const items = searchItems(res.results ?? []);
      // Results are already ranked by the server: keep its order, never re-filter them client-side.
      const shown: Item[] = items.map((i) => ({ label: i.label, description: i.description, detail: i.detail, uri: i.uri, alwaysShow: true }));
      // The index was still catching up: say so rather than let an empty list read as "no such memory".
      // The workspace filter hid matches: say how many, one click away (and back).
      if (res.hidden) shown.push({ label: `$(eye) ${res.hidden} more in other workspaces`, description: "show every workspace's memories", alwaysShow: true, toggle: true });
      if (everywhere) shown.push({ label: "$(eye-closed) Only this workspace", description: "hide other workspaces' memories", alwaysShow: true, toggle: true });
      if (res.complete === false) shown.push({ label: "$(sync~spin) Indexing…", description: "results may be incomplete: search again in a moment", alwaysShow: true });
      // The semantic layer is still filling: these matched words only, so a paraphrase may be missing.
      if (res.note) shown.push({ label: "$(info) Matched words only", description: res.note, alwaysShow: true });
      pick.items = shown.some((i) => i.uri) ? shown : [{ label: "No memories match", description: query, alwaysShow: true }, ...shown];
    } catch (err) {
      if (mine === seq) pick.items = [{ label: "Search failed", detail: err instanceof Error ? err.message : String(err), alwaysShow: true }];
    } finally {
      if (mine === seq) pick.busy = false;
    }
  };
  pick.onDidChangeValue((v) => { clearTimeout(timer); timer = setTimeout(() => void run(v), TYPING_PAUSE_MS); });
  const chosen = await new Promise<Item | undefined>((resolve) => {
    pick.onDidAccept(() => {
      if (pick.selectedItems[0]?.toggle) { // the hint: switch views, stay in the pick
        everywhere = !everywhere;
        void run(pick.value);
        return;
      }
      resolve(pick.selectedItems[0]);
    });
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  clearTimeout(timer);
  pick.dispose();
  if (chosen?.uri) {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(chosen.uri));
    await vscode.window.showTextDocument(doc);
  }
}
