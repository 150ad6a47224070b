// The language client: finding (or installing) the server, starting, stopping and restarting it, the
// "Kin Memory" output channel, and `exec`, the one typed way to call a `kin.memory.*` command.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction, type DocumentSelector, ErrorAction, ExecuteCommandRequest, LanguageClient, type LanguageClientOptions, type ResponseError, RevealOutputChannelOn, type ServerOptions, State, TransportKind,
} from "vscode-languageclient/node";
import { findServer, pickWheel, type ServerCommand, shapeArgs } from "./discovery";
import { InstallError, installBundledServer, runProcess } from "./install";
import type { CommandName, ParamsOf, ResultOf } from "./protocol";
import { bootstrapClaims, CONVENTIONAL_PATTERN } from "./paths";
import { CRASH_WINDOW_MS, CrashCounter, type DownCause, downMessage, OPEN_SETTINGS, RESTART, SHOW_OUTPUT } from "./server_down";
import { configurationItem, SECTION, serverSection, userLevel } from "./settings";

/** The pause before a crashed server is started again. */
const RESTART_DELAY_MS = 500;

/** A start that failed, already told to the person (once per cause): callers do not tell it again. */
export class ServerDown extends Error {}

/** Sends one `kin.memory.*` command; parameter and result types come from the generated protocol. */
export type Exec = <K extends CommandName>(name: K, params: ParamsOf<K>, token?: vscode.CancellationToken) => Promise<ResultOf<K>>;

export interface ClientOptions {
  /** The extension's install folder (the bundled server wheel is in `server-wheel/`). */
  extensionPath: string;
  /** Where the bundled server's private virtual environment goes. */
  storagePath: string;
  /**
   * Runs after each start, before anyone waiting for the client is let through, with an `exec` bound to
   * the new client (so it cannot wait on the start it is part of). A failure is logged, not fatal.
   */
  onStarted?: (exec: Exec) => Promise<void>;
  /** The roots below which `*.md` documents go to the server (besides `**\/.kin/memory/**`), read at each start. */
  selectorRoots: () => string[];
  /** The store root the server reported, once known: a start whose selector misses it starts again. */
  serverRoot: () => string | undefined;
}

export class ServerClient implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly stateChanged = new vscode.EventEmitter<"running" | "stopped">();
  readonly onDidChangeState = this.stateChanged.event;
  private readonly started = new vscode.EventEmitter<void>();
  /** The explicit roots of the running client's document selector. */
  private attachedRoots: string[] = [];
  private readonly crashes = new CrashCounter();
  /** The restart after a crash, a moment later (never from inside the old client's close handling). */
  private restartTimer: NodeJS.Timeout | undefined;
  /** The cause last told (a message per cause, not per failed call); cleared when the server runs. */
  private toldDown: string | undefined;
  /** Why the server is down now (undefined while it runs or starts): the view says it instead of old data. */
  downReason: string | undefined;
  /** The kind of that cause (the view's text and buttons depend on it). */
  downKind: DownCause["kind"] | undefined;
  /** Fires once a (re)started server is ready, after `onStarted`. */
  readonly onDidStart = this.started.event;

  constructor(private readonly options: ClientOptions) {
    this.output = vscode.window.createOutputChannel("Kin Memory", { log: true });
  }

  dispose(): void {
    clearTimeout(this.restartTimer);
    this.stateChanged.dispose();
    this.started.dispose();
    this.output.dispose();
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** The running client, starting the server first if needed (concurrent callers share one start). */
  ensure(): Promise<LanguageClient> {
    if (this.client && this.client.state === State.Running) return Promise.resolve(this.client);
    this.starting ??= this.start().finally(() => { this.starting = undefined; });
    return this.starting;
  }

  readonly exec: Exec = async (name, params, token) => {
    const client = await this.ensure();
    return send(client, name, params, token);
  };

  async stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    const c = this.client;
    this.client = undefined;
    try {
      if (c) await c.dispose();
    } catch {
      // it had stopped already (a crash it was not restarted from)
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    this.toldDown = undefined; // asked for again: a failure now is news
    this.crashes.reset();
    await this.ensure();
  }

  /**
   * The running (or starting) client's server stopped unexpectedly: started again as a new client a moment
   * later, until it has stopped CRASH_LIMIT times within CRASH_WINDOW_MS; then one message with Restart.
   * A crash while starting counts the same (a server that dies on every start is the usual crash loop).
   */
  private crashed(client: LanguageClient): void {
    if (!this.crashes.crashed(Date.now())) {
      this.tellDown({ kind: "crashed", count: this.crashes.count, minutes: Math.round(CRASH_WINDOW_MS / 60_000) });
      return;
    }
    this.output.warn("the server stopped unexpectedly: restarting it");
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      if (this.client === client) void this.ensure().catch(() => undefined); // a failure is told by start()
    }, RESTART_DELAY_MS);
  }

  /** Says why the server is down, once per cause, with the actions that fix it; the view follows. */
  private tellDown(cause: DownCause): void {
    const { key, message, actions } = downMessage(cause);
    this.downReason = message.replace(/^Kin Memory: /, "");
    this.downKind = cause.kind;
    this.stateChanged.fire("stopped");
    if (this.toldDown === key) {
      void vscode.window.setStatusBarMessage("Kin Memory: the server is not running", 4000);
      return;
    }
    this.toldDown = key;
    void vscode.window.showErrorMessage(message, ...actions).then(async (a) => {
      if (a === OPEN_SETTINGS) await vscode.commands.executeCommand("workbench.action.openSettings", "kinMemory.server");
      else if (a === RESTART) await this.restart().catch((err) => this.report(err));
      else if (a === SHOW_OUTPUT) this.output.show();
    });
  }

  /** Whether the running client's selector sends the documents below `root` to the server. */
  attachesBelow(root: string): boolean {
    return bootstrapClaims(path.join(root, "memory.md"), this.attachedRoots);
  }

  /**
   * Restarts a running client whose selector misses the server's root (the root moved, or a first run
   * found it where no pattern looked): a selector is fixed for a client's life.
   */
  async reattach(): Promise<void> {
    const root = this.options.serverRoot();
    if (this.starting || !this.running || root === undefined || this.attachesBelow(root)) return;
    this.output.info(`the store root ${root} is new: restarting to attach to its memory files`);
    await this.restart();
  }

  /** An error from a command: into the output channel and an error toast that can open it. */
  report(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.output.error(message);
    if (err instanceof ServerDown) { // told once already, with its actions
      void vscode.window.setStatusBarMessage("Kin Memory: the server is not running", 4000);
      return;
    }
    void vscode.window.showErrorMessage(`Kin Memory: ${message}`, "Show output").then((a) => { if (a) this.output.show(); });
  }

  private async resolveServer(): Promise<ServerCommand> {
    // What runs is the user's choice alone: never a value from the opened folder (see settings.ts).
    const cfg = vscode.workspace.getConfiguration(SECTION);
    const venvDir = path.join(this.options.storagePath, "server-venv");
    const settingPath = userLevel(cfg.inspect("server.path"));
    const settingArgs = userLevel(cfg.inspect("server.args"));
    const input = {
      settingPath: typeof settingPath === "string" ? settingPath : null,
      settingArgs: Array.isArray(settingArgs) ? settingArgs as unknown[] : [], pathEnv: process.env.PATH,
      platform: process.platform, home: os.homedir(), venvDir, isExecutable,
    };
    const found = findServer(input);
    if (found && found.source !== "bundled") return found;
    const wheelDir = path.join(this.options.extensionPath, "server-wheel");
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
        "Kin Memory found no kin-memory-lsp on PATH and this build of the extension bundles no server. " +
        "Install it with \"pip install kin-memory\", or set the Kin Memory: Server Path setting.",
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

  private async start(again = false): Promise<LanguageClient> {
    if (this.client) {
      const old = this.client;
      this.client = undefined;
      try { await old.dispose(); } catch { /* already stopped */ }
    }
    let server: ServerCommand;
    try {
      server = await this.resolveServer();
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      this.output.error(detail);
      this.tellDown({ kind: "missing", detail: detail.replace(/^Kin Memory /, "") });
      throw new ServerDown(detail);
    }
    if (server.source === "setting" && !isExecutable(server.command)) {
      // Told here, once: started anyway, the language client would add its own notifications.
      const detail = `the Kin Memory: Server Path setting names ${server.command}, which is not a program that can run here. Fix the setting, or clear it to use the bundled server.`;
      this.output.error(detail);
      this.tellDown({ kind: "missing", detail });
      throw new ServerDown(detail);
    }
    const roots = this.options.selectorRoots();
    let crashedWhileStarting = false;
    this.output.info(`starting ${server.command} ${server.args.join(" ")} (from ${server.source})`);
    const serverOptions: ServerOptions = {
      command: server.command, args: server.args, transport: TransportKind.stdio,
      options: { env: { ...process.env, PYTHONUNBUFFERED: "1" } },
    };
    const clientOptions: LanguageClientOptions = {
      // By path, whatever the language (memory files stay markdown): see root.ts's header.
      documentSelector: documentSelector(roots),
      outputChannel: this.output,
      // A failed request is logged, not a toast in the client's words ("Request textDocument/documentLink
      // failed … Code: -32099" while a crashed server restarts): our commands report their own errors.
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // A settings change makes the server pull the section again (`settings: null`), so every value it gets
      // goes through the configuration middleware below, never VS Code's raw section.
      synchronize: { configurationSection: SECTION },
      initializationOptions: { [SECTION]: readServerSection() },
      middleware: {
        workspace: {
          didChangeConfiguration: (_sections, next) => next(undefined),
          configuration: async (params, token, next) => {
            const answers: unknown = await next(params, token);
            if (!Array.isArray(answers)) return answers as ResponseError;
            const theirs = answers as unknown[];
            const ours = readServerSection();
            return params.items.map((item, i): unknown => {
              const mine = configurationItem(item.section, ours);
              return mine ? mine.value : theirs[i];
            });
          },
        },
      },
      // Logged, not shown: start() tells a failed start once, in the editor's words (the client would show
      // the raw "Pending response rejected since connection got disposed").
      initializationFailedHandler: (error) => {
        this.output.error(`the server's initialization failed: ${error instanceof Error ? error.message : String(error)}`);
        return false;
      },
      // Our own crash handling (see crashed()): the client's own restart does not cover a crash while
      // it starts (it gave up silently), and its message says "will not be restarted" with no Restart.
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          if (this.client === client) { // else stopped on purpose
            crashedWhileStarting = client.state === State.Starting;
            this.crashed(client);
          }
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient("kinMemory", "Kin Memory", serverOptions, clientOptions);
    quietWhileNotRunning(client);
    this.client = client;
    this.attachedRoots = roots;
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.downReason = undefined;
        this.downKind = undefined;
        this.toldDown = undefined;
        this.stateChanged.fire("running");
      }
      if (e.newState === State.Stopped) this.stateChanged.fire("stopped");
    });
    try {
      await client.start();
    } catch (err) {
      this.output.error(`the server did not start: ${String(err)}`);
      // A crash while starting is a crash (restarted, or told once the loop is clear), not a failed start.
      if (!crashedWhileStarting) this.tellDown({ kind: "failed", command: server.command });
      throw new ServerDown(String(err));
    }
    try {
      await this.options.onStarted?.((name, params, token) => send(client, name, params, token));
    } catch (err) {
      this.output.error(`after the start: ${err instanceof Error ? err.message : String(err)}`);
    }
    const root = this.options.serverRoot();
    if (!again && root !== undefined && !this.attachesBelow(root)) {
      // The first run with a root no pattern knew (KIN_MEMORY_DIR, ~/.kin/settings.toml): once, with it.
      this.output.info(`the store root ${root} is new: restarting to attach to its memory files`);
      this.client = undefined;
      await client.dispose();
      return this.start(true);
    }
    this.started.fire();
    return client;
  }
}

/**
 * The language client's own notifications while its server is not running (a start that failed, a
 * connection that closed) would be a second and third message for one cause, with the client's words:
 * start() and crashed() tell the cause once, with its actions. They still go to the output. The client
 * has no option for this; its notifications while running are left as they are.
 */
function quietWhileNotRunning(client: LanguageClient): void {
  const target = client as unknown as { showNotificationMessage?: (...args: unknown[]) => unknown };
  const shown = target.showNotificationMessage;
  if (typeof shown !== "function") return;
  target.showNotificationMessage = (...args: unknown[]) => (client.state === State.Running ? shown.apply(client, args) : undefined);
}

/** Markdown files by path: the conventional store's shape and `*.md` below each explicit root. */
export function documentSelector(roots: readonly string[]): DocumentSelector {
  return [
    { scheme: "file", pattern: CONVENTIONAL_PATTERN },
    ...roots.map((r) => ({ scheme: "file", pattern: { baseUri: vscode.Uri.file(r).toString(), pattern: "**/*.md" } })),
  ];
}

/** The `kinMemory` section for the server: user-level values for the settings a folder must not steer. */
export function readServerSection(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  return serverSection(cfg, (key) => cfg.inspect(key));
}

function send<K extends CommandName>(client: LanguageClient, name: K, params: ParamsOf<K>, token?: vscode.CancellationToken): Promise<ResultOf<K>> {
  // The one unchecked step: the server answers with the result type the protocol declares for `name`.
  return client.sendRequest(ExecuteCommandRequest.type, { command: name, arguments: [params] }, token) as Promise<ResultOf<K>>;
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
