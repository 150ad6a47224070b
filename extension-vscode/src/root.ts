// Which documents belong to the server, and where the store is.
//
// Memory files stay `markdown` (word wrap, the preview, link checks and markdownlint keep working): the
// language client attaches to them by path, never by a language of its own. The document selector is
// built from patterns, because before the server runs the extension cannot ask it where the store is:
//   1. `**/.kin/memory/**/*.md` (the default store's shape);
//   2. `*.md` below `kinMemory.memoryDir`, when set (machine scope, so a workspace cannot add a pattern);
//   3. `*.md` below the root the server reported the last time it ran (kept in globalState): a root set by
//      KIN_MEMORY_DIR or by `memory_dir` in ~/.kin/settings.toml, which only the server resolves.
// Once the server runs, its `kin.memory.info` root alone decides what a memory file is (the tree, the file
// watcher, "New memory…" and "Open store folder" use it); when that root is not covered by the patterns
// the client started with, the client restarts once with a selector that covers it (see client.ts).
// The server ignores a document outside its root, so a pattern that matches too much costs nothing.
import * as fs from "node:fs";
import * as os from "node:os";
import * as vscode from "vscode";
import { bootstrapClaims, bootstrapFolder, bootstrapRoots, isMemoryPath, machineRoots } from "./paths";
import type { Exec } from "./client";
import type { InfoResult } from "./protocol";
import { SECTION, userLevel } from "./settings";

const REMEMBERED_ROOT = "kinMemory.lastServerRoot";
/** The conventional store's documents, whatever the root: pattern 1 above. */
export { CONVENTIONAL_PATTERN } from "./paths";

export class StoreRoot implements vscode.Disposable {
  private serverRoot: string | undefined;
  private readonly changed = new vscode.EventEmitter<Pick<InfoResult, "root" | "rootSource">>();
  /** Fires with the server's root (and how it resolved it) whenever it is first known or moves. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly state: vscode.Memento) {}

  dispose(): void {
    this.changed.dispose();
  }

  /** The server's root, once a running server has reported it. */
  get current(): string | undefined {
    return this.serverRoot;
  }

  private bootstrap(): string[] {
    // User level only: a folder's settings can never add a pattern (memoryDir is machine scope, see settings.ts).
    const value = userLevel(vscode.workspace.getConfiguration(SECTION).inspect("memoryDir"));
    const setting = typeof value === "string" ? value : null;
    return bootstrapRoots({ setting, remembered: this.state.get<string>(REMEMBERED_ROOT), home: os.homedir() });
  }

  /** The explicit roots the language client attaches below (patterns 2 and 3, and the server's root). */
  selectorRoots(): string[] {
    const roots = this.bootstrap();
    if (this.serverRoot !== undefined && !roots.includes(this.serverRoot)) roots.push(this.serverRoot);
    return roots;
  }

  /** Whether a file is a memory file: by the server's root once known, by the bootstrap patterns before. */
  isMemoryFile(fsPath: string): boolean {
    const root = this.serverRoot;
    if (root === undefined) return bootstrapClaims(fsPath, this.bootstrap());
    if (isMemoryPath(fsPath, root)) return true;
    // The server reports its root with links resolved; an editor may hold the file by another path.
    // (Only for *.md: this runs for every diagnostics change of every language.)
    return fsPath.toLowerCase().endsWith(".md") && isMemoryPath(realpath(fsPath), root);
  }

  /** Whether a document is a memory file on disk (its language stays whatever VS Code gave it). */
  isMemoryDocument(doc: vscode.TextDocument): boolean {
    return doc.uri.scheme === "file" && this.isMemoryFile(doc.uri.fsPath);
  }

  /**
   * Whether to start the server before anything asks for it: a memory is open, the open folders are (in)
   * a store, or the machine has one (a cheap look for the folders the patterns name, and the default
   * store's), so the status bar and the Problems panel fill without a memory being opened.
   */
  shouldStartServer(): boolean {
    if (vscode.workspace.textDocuments.some((d) => this.isMemoryDocument(d))) return true;
    const roots = [...this.selectorRoots(), ...machineRoots(os.homedir(), process.env)];
    if ((vscode.workspace.workspaceFolders ?? []).some((f) => f.uri.scheme === "file" && bootstrapFolder(f.uri.fsPath, roots))) return true;
    return roots.some(isDirectory);
  }

  /** Asks the running server where its store is (after a start, or after the root setting changed). */
  async sync(exec: Exec): Promise<void> {
    const info = await exec("kin.memory.info", {});
    const moved = info.root !== this.serverRoot;
    this.serverRoot = info.root;
    if (this.state.get<string>(REMEMBERED_ROOT) !== info.root) await this.state.update(REMEMBERED_ROOT, info.root);
    if (moved) this.changed.fire(info);
  }
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}
