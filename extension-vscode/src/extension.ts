// The Kin Memory extension: starts the kin-memory language server for memory files and puts its
// custom commands, a tree of the store and a status bar item into VS Code.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest, LanguageClient, type LanguageClientOptions, type ServerOptions, State, TransportKind,
} from "vscode-languageclient/node";
import { findServer, pickWheel, type ServerCommand, shapeArgs } from "./discovery";
import { InstallError, installBundledServer, runProcess } from "./install";
import {
  CATEGORIES, CATEGORY_INFO, createToolInput, defaultNewMemoryName, isMemoryPath, markReviewedArgs, uriFromArg,
  type MemoryEntry, newMemoryPath, newMemoryText, reflectArgs, resolveStoreRoot, type SearchResult, searchArgs,
  searchItems, sweepArgs, sweepSummary, titleFromPath,
} from "./shape";
import { MemoryTree, StatusItem } from "./views";

export const LANGUAGE_ID = "kin-memory";
const PREVIEW_SCHEME = "kin-memory-preview";

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Controller> {
  controller = new Controller(context);
  await controller.activate();
  return controller;
}

export async function deactivate(): Promise<void> {
  await controller?.stopClient();
  controller = undefined;
}

function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (process.platform === "win32") return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export class Controller {
  readonly output: vscode.LogOutputChannel;
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private root: string;
  readonly tree: MemoryTree;
  private readonly status: StatusItem;
  private readonly previewChanged = new vscode.EventEmitter<vscode.Uri>();
  private previewText = new Map<string, string>();

  constructor(private readonly context: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel("Kin Memory", { log: true });
    this.root = this.computeRoot();
    this.tree = new MemoryTree(() => this.list());
    this.status = new StatusItem();
  }

  // -- activation ------------------------------------------------------------------------------
  async activate(): Promise<void> {
    const ctx = this.context;
    ctx.subscriptions.push(this.output, this.status, this.previewChanged);
    const view = vscode.window.createTreeView("kinMemory.memories", { treeDataProvider: this.tree, showCollapseAll: true });
    ctx.subscriptions.push(view, this.tree);
    ctx.subscriptions.push(view.onDidChangeVisibility((e) => { if (e.visible) void this.ensureClient().then(() => this.refresh()); }));
    this.tree.onDidLoad((memories) => this.status.update(memories));

    const commands: Record<string, (...args: unknown[]) => unknown> = {
      "kinMemory.search": () => this.search(),
      "kinMemory.reflect": () => this.reflect(),
      "kinMemory.sweep": () => this.sweep(),
      "kinMemory.markReviewed": (arg) => this.markReviewed(arg),
      "kinMemory.newMemory": () => this.newMemory(),
      "kinMemory.indexPreview": () => this.indexPreview(),
      "kinMemory.reindex": () => this.reindex(),
      "kinMemory.restartServer": () => this.restart(),
      "kinMemory.openStoreFolder": () => this.openStoreFolder(),
      "kinMemory.refreshTree": () => this.refresh(),
      "kinMemory.showOutput": () => this.output.show(),
    };
    for (const [id, fn] of Object.entries(commands)) {
      ctx.subscriptions.push(vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await fn(...args);
        } catch (err) {
          this.fail(err);
          return undefined;
        }
      }));
    }

    ctx.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, {
      onDidChange: this.previewChanged.event,
      provideTextDocumentContent: (uri) => this.previewText.get(uri.toString()) ?? "",
    }));

    ctx.subscriptions.push(vscode.workspace.onDidOpenTextDocument((doc) => this.adopt(doc)));
    ctx.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)));
    let timer: NodeJS.Timeout | undefined;
    ctx.subscriptions.push(vscode.languages.onDidChangeDiagnostics((e) => {
      if (!e.uris.some((u) => u.scheme === "file" && isMemoryPath(u.fsPath, this.root))) return;
      clearTimeout(timer);
      timer = setTimeout(() => this.refresh(), 300);
    }));
    ctx.subscriptions.push({ dispose: () => clearTimeout(timer) });
    this.watchStore();

    for (const doc of vscode.workspace.textDocuments) await this.adopt(doc);
    if (this.isRelevant()) await this.ensureClient();
  }

  private computeRoot(): string {
    const setting = vscode.workspace.getConfiguration("kinMemory").get<string | null>("memoryDir");
    let globalSettings: string | undefined;
    try {
      globalSettings = fs.readFileSync(path.join(os.homedir(), ".kin", "settings.toml"), "utf8");
    } catch {
      globalSettings = undefined;
    }
    return resolveStoreRoot({ setting, env: process.env.KIN_MEMORY_DIR, home: os.homedir(), globalSettings });
  }

  private watcher: vscode.FileSystemWatcher | undefined;
  private watchStore(): void {
    this.watcher?.dispose();
    const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(this.root), "**/*.md"));
    let timer: NodeJS.Timeout | undefined;
    const later = () => { clearTimeout(timer); timer = setTimeout(() => this.refresh(), 300); };
    w.onDidCreate(later);
    w.onDidDelete(later);
    w.onDidChange(later);
    this.watcher = w;
    this.context.subscriptions.push(w);
  }

  /** Gives memory files under the configured store the kin-memory language (and so the server). */
  private async adopt(doc: vscode.TextDocument): Promise<void> {
    if (doc.uri.scheme !== "file") return;
    if (doc.languageId === LANGUAGE_ID) {
      void this.ensureClient();
      return;
    }
    if (doc.languageId === "markdown" && isMemoryPath(doc.uri.fsPath, this.root)) {
      await vscode.languages.setTextDocumentLanguage(doc, LANGUAGE_ID);
    }
  }

  private isRelevant(): boolean {
    if (vscode.workspace.textDocuments.some((d) => d.languageId === LANGUAGE_ID)) return true;
    return (vscode.workspace.workspaceFolders ?? []).some((f) => {
      const rel = path.relative(this.root, f.uri.fsPath);
      return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
    });
  }

  private async configurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (e.affectsConfiguration("kinMemory.memoryDir")) {
      this.root = this.computeRoot();
      this.watchStore();
      for (const doc of vscode.workspace.textDocuments) await this.adopt(doc);
    }
    if (e.affectsConfiguration("kinMemory.server")) {
      const answer = await vscode.window.showInformationMessage("Kin Memory: the server settings changed.", "Restart server");
      if (answer) await this.restart();
    }
  }

  // -- the language client ---------------------------------------------------------------------
  ensureClient(): Promise<LanguageClient> {
    if (this.client && this.client.state === State.Running) return Promise.resolve(this.client);
    if (!this.starting) {
      this.starting = this.startClient().finally(() => { this.starting = undefined; });
    }
    return this.starting;
  }

  private async resolveServer(): Promise<ServerCommand> {
    const cfg = vscode.workspace.getConfiguration("kinMemory.server");
    const venvDir = path.join(this.context.globalStorageUri.fsPath, "server-venv");
    const input = {
      settingPath: cfg.get<string | null>("path"), settingArgs: cfg.get<unknown[]>("args"), pathEnv: process.env.PATH,
      platform: process.platform, home: os.homedir(), venvDir, isExecutable,
    };
    const found = findServer(input);
    if (found && found.source !== "bundled") return found;
    const wheelDir = path.join(this.context.extensionPath, "server-wheel");
    let files: string[] = [];
    try {
      files = fs.readdirSync(wheelDir);
    } catch {
      files = [];
    }
    const wheel = pickWheel(files);
    if (!wheel) {
      if (found) return found;
      throw new InstallError(
        "Kin Memory found no `kin-memory-lsp` on PATH and this build of the extension bundles no server. " +
        "Install it with `pip install kin-memory`, or set `kinMemory.server.path`.",
      );
    }
    const command = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Kin Memory: installing the language server", cancellable: false },
      (progress) => installBundledServer({
        venvDir, wheel: path.join(wheelDir, wheel), platform: process.platform, pathEnv: process.env.PATH, isExecutable,
        run: runProcess, report: (message) => progress.report({ message }), log: (line) => this.output.info(line),
      }),
    );
    return { command, args: shapeArgs(input.settingArgs), source: "bundled" };
  }

  private async startClient(): Promise<LanguageClient> {
    if (this.client) {
      const old = this.client;
      this.client = undefined;
      try { await old.dispose(); } catch { /* already stopped */ }
    }
    const server = await this.resolveServer();
    this.output.info(`starting ${server.command} ${server.args.join(" ")} (from ${server.source})`);
    const serverOptions: ServerOptions = {
      command: server.command, args: server.args, transport: TransportKind.stdio,
      options: { env: { ...process.env, PYTHONUNBUFFERED: "1" } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: LANGUAGE_ID }],
      outputChannel: this.output,
      synchronize: { configurationSection: "kinMemory" },
      initializationOptions: { kinMemory: JSON.parse(JSON.stringify(vscode.workspace.getConfiguration("kinMemory"))) as object },
      connectionOptions: { maxRestartCount: 3 },
    };
    const client = new LanguageClient("kinMemory", "Kin Memory", serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.status.running();
      if (e.newState === State.Stopped) this.status.stopped();
    });
    try {
      await client.start();
    } catch (err) {
      this.status.stopped();
      this.output.error(`the server did not start: ${String(err)}`);
      void vscode.window.showErrorMessage(
        `Kin Memory: the language server (${server.command}) did not start. Check \`kinMemory.server.path\`, or see the output.`,
        "Show output",
      ).then((a) => { if (a) this.output.show(); });
      throw err;
    }
    this.refresh();
    return client;
  }

  async stopClient(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) await c.dispose();
  }

  async restart(): Promise<void> {
    await this.stopClient();
    await this.ensureClient();
    void vscode.window.setStatusBarMessage("Kin Memory: server restarted", 3000);
  }

  async exec<T>(command: string, arg: object, token?: vscode.CancellationToken): Promise<T> {
    const client = await this.ensureClient();
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] }, token)) as T;
  }

  private fail(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.output.error(message);
    void vscode.window.showErrorMessage(`Kin Memory: ${message}`, "Show output").then((a) => { if (a) this.output.show(); });
  }

  // -- views -------------------------------------------------------------------------------------
  private async list(): Promise<MemoryEntry[]> {
    if (!this.client || this.client.state !== State.Running) throw new Error("the server is not running");
    const res = await this.exec<{ memories: MemoryEntry[] }>("kin.memory.list", {});
    return res.memories ?? [];
  }

  refresh(): void {
    this.tree.reload();
  }

  // -- commands ----------------------------------------------------------------------------------
  async search(): Promise<void> {
    await this.ensureClient();
    type Item = vscode.QuickPickItem & { uri?: string };
    const pick = vscode.window.createQuickPick<Item>();
    pick.title = "Search memories";
    pick.placeholder = "Type words to recall (the same top results the agent gets)";
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
        const res = await this.exec<{ results: SearchResult[] }>("kin.memory.search", searchArgs(query));
        if (mine !== seq) return;
        const items = searchItems(res.results ?? []);
        // Results are already ranked by the server: keep its order, never re-filter them client-side.
        pick.items = items.length
          ? items.map((i) => ({ label: i.label, description: i.description, detail: i.detail, uri: i.uri, alwaysShow: true }))
          : [{ label: "No memories match", description: query, alwaysShow: true }];
      } catch (err) {
        if (mine === seq) pick.items = [{ label: "Search failed", detail: err instanceof Error ? err.message : String(err), alwaysShow: true }];
      } finally {
        if (mine === seq) pick.busy = false;
      }
    };
    pick.onDidChangeValue((v) => { clearTimeout(timer); timer = setTimeout(() => void run(v), 150); });
    const chosen = await new Promise<Item | undefined>((resolve) => {
      pick.onDidAccept(() => resolve(pick.selectedItems[0]));
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

  async reflect(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
      title: "Reflect on transcript", openLabel: "Reflect", canSelectMany: false,
      filters: { Transcripts: ["jsonl", "json", "txt", "md"], "All files": ["*"] },
    });
    const file = picked?.[0];
    if (!file) return;
    type Reflection = { summary: string; changes: { kind: string; path: string }[]; applied: boolean };
    const res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Kin Memory: reflecting on the transcript", cancellable: true },
      (_progress, token) => this.exec<Reflection>("kin.memory.reflect", reflectArgs(file.scheme === "file" ? file.fsPath : file.toString()), token),
    );
    const n = res.changes?.length ?? 0;
    const what = n ? `${n} change${n === 1 ? "" : "s"}${res.applied ? " applied" : " proposed, not applied"}` : "nothing to write";
    void vscode.window.showInformationMessage(`Kin Memory reflection: ${what}. ${res.summary ?? ""}`.trim());
    this.refresh();
  }

  async sweep(): Promise<void> {
    type Sweep = { swept: string[]; kept: number };
    const dry = await this.exec<Sweep>("kin.memory.sweep", sweepArgs(true));
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
      (_p, token) => this.exec<Sweep>("kin.memory.sweep", sweepArgs(false), token),
    );
    void vscode.window.showInformationMessage(`Kin Memory: ${sweepSummary(res.swept ?? [], res.kept, false)}`);
    this.refresh();
  }

  async markReviewed(arg?: unknown): Promise<void> {
    let uri: string | undefined;
    if (arg instanceof vscode.Uri) uri = arg.toString();
    else uri = uriFromArg(arg);
    uri ??= vscode.window.activeTextEditor?.document.uri.toString();
    if (!uri) {
      void vscode.window.showWarningMessage("Kin Memory: open a memory file to mark it reviewed.");
      return;
    }
    await this.exec("kin.memory.markReviewed", markReviewedArgs(uri));
    void vscode.window.setStatusBarMessage("Kin Memory: marked reviewed", 3000);
    this.refresh();
  }

  async newMemory(): Promise<void> {
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
    const res = await this.exec<{ content: string; isError: boolean }>(
      "kin.memory.tool", createToolInput(target.path, newMemoryText(category, titleFromPath(target.path))),
    );
    if (res.isError) throw new Error(res.content);
    const uri = vscode.Uri.file(path.join(this.root, ...target.path.slice("/memories/".length).split("/")));
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const end = editor.document.lineCount;
    editor.selection = new vscode.Selection(end, 0, end, 0);
    this.refresh();
  }

  async indexPreview(): Promise<void> {
    type Preview = { text: string; lines: number; bytes: number; truncated: boolean };
    const res = await this.exec<Preview>("kin.memory.indexPreview", {});
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: "/prompt-block.md" });
    this.previewText.set(uri.toString(), res.text ?? "");
    this.previewChanged.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, "markdown");
    await vscode.window.showTextDocument(doc, { preview: true });
    const cut = res.truncated ? " — truncated at the cap: the rest is not in the prompt" : "";
    void vscode.window.showInformationMessage(`Kin Memory prompt block: ${res.lines} lines, ${res.bytes} bytes${cut}.`);
  }

  async reindex(): Promise<void> {
    const res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Kin Memory: reindexing", cancellable: true },
      (_p, token) => this.exec<{ files: number; seconds: number }>("kin.memory.reindex", {}, token),
    );
    void vscode.window.showInformationMessage(`Kin Memory: reindexed ${res.files} files in ${Number(res.seconds).toFixed(2)} s.`);
    this.refresh();
  }

  async openStoreFolder(): Promise<void> {
    const uri = vscode.Uri.file(this.root);
    await vscode.commands.executeCommand("vscode.openFolder", uri, { forceNewWindow: true });
  }
}
