// The Kin Memory extension's entry point: it creates the parts and wires them together. What each part
// does lives in its own module: client.ts (the language server), root.ts (which documents are the
// server's, and where the store is), tree.ts (the view), status.ts (the status bar), commands/*.
import * as vscode from "vscode";
import { ServerClient } from "./client";
import * as bulk from "./commands/bulk";
import * as create from "./commands/create";
import * as deletion from "./commands/delete";
import * as history from "./commands/history";
import * as memoryMenu from "./commands/memory_menu";
import * as preview from "./commands/preview";
import * as reflect from "./commands/reflect";
import * as review from "./commands/review";
import * as search from "./commands/search";
import * as store from "./commands/store";
import * as sweep from "./commands/sweep";
import * as sync from "./commands/sync";
import { CandidatesView } from "./candidates";
import { HealthPanel } from "./health";
import { StoreRoot } from "./root";
import { StatusItem } from "./status";
import { MemoryTree } from "./tree";

/** After `kinMemory.memoryDir` changes, the wait before asking the server for its root again: the client
 * sends the new setting from its own listener, and the server re-resolves its root when that arrives. */
const SETTING_SETTLE_MS = 300;

let server: ServerClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const root = new StoreRoot(context.globalState);
  const client = new ServerClient({
    extensionPath: context.extensionPath,
    storagePath: context.globalStorageUri.fsPath,
    onStarted: (exec) => root.sync(exec),
    selectorRoots: () => root.selectorRoots(),
    serverRoot: () => root.current,
  });
  server = client;
  const status = new StatusItem();
  const tree = new MemoryTree(
    async () => {
      if (!client.running) throw new Error("the server is not running");
      return (await client.exec("kin.memory.list", {})).memories ?? [];
    },
    async () => (client.running ? ((await client.exec("kin.memory.changes", {})).changes ?? []) : []),
  );
  const candidates = new CandidatesView(async () => {
    if (!client.running) throw new Error("the server is not running");
    return (await client.exec("kin.memory.consolidationCandidates", {})).candidates ?? [];
  });
  const refresh = () => tree.reload();
  // A quiet start (the view shown, a memory opened) never brings back a server that is down for a cause
  // the person was told (a crash loop, a missing server): Restart does, or any command. The client reports
  // its own failure.
  const startQuietly = () => (client.downReason !== undefined ? Promise.resolve() : client.ensure().then(() => undefined, () => undefined));
  let settle: NodeJS.Timeout | undefined;
  context.subscriptions.push(client, root, status, tree, candidates, { dispose: () => clearTimeout(settle) });

  context.subscriptions.push(
    client.onDidChangeState((state) => (state === "running" ? status.running() : status.stopped())),
    client.onDidChangeState((state) => tree.serverDown(state === "running" ? undefined : client.downKind)),
    client.onDidStart(refresh),
    tree.onDidLoad((memories) => status.update(memories)),
    tree.onDidLoad(() => candidates.reloadSoon()),
    vscode.commands.registerCommand("kinMemory.refreshCandidates", () => candidates.reload()),
    root.onDidChange((where) => {
      tree.setRoot(where.root, where.rootSource);
      void client.reattach().catch((err) => client.report(err));
    }),
    tree.view.onDidChangeVisibility((e) => {
      if (e.visible) void startQuietly().then(refresh);
    }),
  );

  const deps = { client, root, refresh };
  for (const group of [search, reflect, sweep, review, create, deletion, preview, store, history, bulk, sync]) {
    context.subscriptions.push(...group.register(deps));
  }
  context.subscriptions.push(...memoryMenu.register({ ...deps, tree }));
  const health = new HealthPanel(client, tree);
  context.subscriptions.push(
    health,
    vscode.commands.registerCommand("kinMemory.showHealth", () => health.show().catch((err) => client.report(err))),
    tree.onDidLoad(() => health.refreshIfOpen()),
  );

  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument((doc) => {
      if (root.isMemoryDocument(doc)) void startQuietly();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration("kinMemory.memoryDir")) return;
      if (!client.running) {
        if (root.shouldStartServer()) void startQuietly(); // the bootstrap patterns changed
        return;
      }
      clearTimeout(settle);
      settle = setTimeout(() => void root.sync(client.exec).catch((err) => client.report(err)), SETTING_SETTLE_MS);
    }),
    vscode.languages.onDidChangeDiagnostics((e) => {
      // Only a change of our own findings: another extension's diagnostics on a memory (Markdown's link
      // checks re-pulled for every open tab, over and over) must not keep the tree reloading.
      if (e.uris.some((u) => u.scheme === "file" && root.isMemoryFile(u.fsPath) && ourFindingsChanged(u))) tree.reloadSoon();
    }),
  );

  if (root.shouldStartServer()) await client.ensure();
}

const seenFindings = new Map<string, string>();

/** Whether the server's findings on `uri` differ from the last time this was asked. */
function ourFindingsChanged(uri: vscode.Uri): boolean {
  const ours = vscode.languages.getDiagnostics(uri).filter((d) => d.source === "kin-memory" || d.source === "sync");
  const key = JSON.stringify(ours.map((d) => [typeof d.code === "object" ? d.code.value : d.code, d.message, d.severity,
    d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character]));
  const id = uri.toString();
  if (seenFindings.get(id) === key) return false;
  seenFindings.set(id, key);
  return true;
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
