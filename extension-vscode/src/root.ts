// Which documents belong to the server, and where the store is.
//
// THE BOOTSTRAP PATH. Before the server runs the extension cannot ask it where the store is, yet it must
// decide which documents get the `kin-memory` language (the client's documentSelector is that language,
// so this decides what the server is sent) and whether to start the server at all. It decides by
// pattern only, never by resolving the root itself:
//   1. `**/.kin/memory/**/*.md`: package.json's `contributes.languages[].filenamePatterns` (the default
//      store; VS Code applies it before the extension even activates);
//   2. `*.md` below `kinMemory.memoryDir`, when set (machine scope, so a workspace cannot add a pattern);
//   3. `*.md` below the root the server reported the last time it ran (kept in globalState): a root set by
//      KIN_MEMORY_DIR or by `memory_dir` in ~/.kin/settings.toml, which only the server resolves.
// Once the server runs, its `kin.memory.info` root alone decides: documents below it are adopted even when
// no pattern matched (the Kin Memory view or any palette command starts the server), documents adopted by
// pattern 2 or 3 outside it are handed back to markdown, and the tree, the file watcher, "New memory…"
// and "Open store folder" use it.
import * as fs from "node:fs";
import * as os from "node:os";
import * as vscode from "vscode";
import { bootstrapClaims, bootstrapFolder, bootstrapRoots, isMemoryPath } from "./paths";
import type { Exec } from "./client";
import type { InfoResult } from "./protocol";
import { SECTION, userLevel } from "./settings";

export const LANGUAGE_ID = "kin-memory";
const REMEMBERED_ROOT = "kinMemory.lastServerRoot";

export class StoreRoot implements vscode.Disposable {
  private serverRoot: string | undefined;
  private readonly changed = new vscode.EventEmitter<Pick<InfoResult, "root" | "rootSource">>();
  /** Fires with the server's root (and how it resolved it) whenever it is first known or moves. */
  readonly onDidChange = this.changed.event;
  /** Documents this extension switched to the kin-memory language (so it may switch them back). */
  private readonly adopted = new Set<string>();

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

  /** Whether a file is a memory file: by the server's root once known, by the bootstrap patterns before. */
  isMemoryFile(fsPath: string): boolean {
    const root = this.serverRoot;
    if (root === undefined) return bootstrapClaims(fsPath, this.bootstrap());
    if (isMemoryPath(fsPath, root)) return true;
    // The server reports its root with links resolved; an editor may hold the file by another path.
    // (Only for *.md: this runs for every diagnostics change of every language.)
    return fsPath.toLowerCase().endsWith(".md") && isMemoryPath(realpath(fsPath), root);
  }

  /** Whether the open folders or documents call for the server before anything asks for it. */
  shouldStartServer(): boolean {
    if (vscode.workspace.textDocuments.some((d) => d.languageId === LANGUAGE_ID)) return true;
    const roots = [...this.bootstrap(), ...(this.serverRoot ? [this.serverRoot] : [])];
    return (vscode.workspace.workspaceFolders ?? []).some((f) => f.uri.scheme === "file" && bootstrapFolder(f.uri.fsPath, roots));
  }

  /** Asks the running server where its store is (after a start, or after the root setting changed). */
  async sync(exec: Exec): Promise<void> {
    const info = await exec("kin.memory.info", {});
    const moved = info.root !== this.serverRoot;
    this.serverRoot = info.root;
    if (this.state.get<string>(REMEMBERED_ROOT) !== info.root) await this.state.update(REMEMBERED_ROOT, info.root);
    if (moved) this.changed.fire(info);
  }

  /** Gives a markdown memory file the kin-memory language; true when the document is (now) the server's. */
  async adopt(doc: vscode.TextDocument): Promise<boolean> {
    if (doc.uri.scheme !== "file") return false;
    if (doc.languageId === LANGUAGE_ID) {
      if (this.serverRoot !== undefined && this.adopted.has(doc.uri.toString()) && !this.isMemoryFile(doc.uri.fsPath)) {
        this.adopted.delete(doc.uri.toString());
        await vscode.languages.setTextDocumentLanguage(doc, "markdown");
        return false;
      }
      return true;
    }
    if (doc.languageId === "markdown" && this.isMemoryFile(doc.uri.fsPath)) {
      this.adopted.add(doc.uri.toString());
      await vscode.languages.setTextDocumentLanguage(doc, LANGUAGE_ID);
      return true;
    }
    return false;
  }

  /** Re-runs {@link adopt} over every open document (the root or the patterns changed). */
  async adoptAll(): Promise<void> {
    for (const doc of [...vscode.workspace.textDocuments]) await this.adopt(doc);
  }
}

function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}
