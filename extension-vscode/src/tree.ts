// The "Kin Memory" view: memories grouped by category with lifecycle badges, fetched from the server and
// refreshed when the store changes on disk. Its header shows the store root the server reported. Above the
// categories, a "Changes" section lists what changed since the last review (with a count badge on the view).
import * as os from "node:os";
import * as vscode from "vscode";
import { displayRoot } from "./paths";
import {
  changeDescription, changeSentence, changesBadgeTooltip, countStatuses, describeFilter, filterMemories, groupByCategory, isFiltering,
  memoryBadge, NO_FILTER, type TreeFilter,
} from "./present";
import type { MemoryEntry, QueueEntry } from "./protocol";

type Node =
  | { kind: "category"; category: string; memories: MemoryEntry[] }
  | { kind: "memory"; memory: MemoryEntry }
  | { kind: "changes"; changes: QueueEntry[] }
  | { kind: "change"; change: QueueEntry };

export const VIEW_ID = "kinMemory.memories";
const QUIET_MS = 300; // bursts of file events and diagnostics become one listing request

export class MemoryTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly loaded = new vscode.EventEmitter<MemoryEntry[]>();
  /** Fires with each listing fetched successfully. */
  readonly onDidLoad = this.loaded.event;
  readonly view: vscode.TreeView<Node>;
  private memories: MemoryEntry[] = [];
  private changes: QueueEntry[] = [];
  /** The store line shown above the tree while the server runs. */
  private rootMessage: string | undefined;
  private down = false;
  private filterState: TreeFilter = NO_FILTER;
  private loading: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private watcher: vscode.FileSystemWatcher | undefined;

  /** `fetch` lists the store; it throws while the server is not running (the last listing stays). */
  constructor(
    private readonly fetch: () => Promise<MemoryEntry[]>,
    private readonly fetchChanges: () => Promise<QueueEntry[]> = () => Promise.resolve([]),
  ) {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.watcher?.dispose();
    this.view.dispose();
    this.changed.dispose();
    this.loaded.dispose();
  }

  /** Shows the server's root above the tree and reloads whenever a memory file under it changes. */
  setRoot(root: string, source: string): void {
    // A message rather than the view's description: VS Code hides the description while this is the only
    // view in its container, and "which store is this?" is the first question with more than one store.
    this.rootMessage = `${displayRoot(root, os.homedir())} (${source})`;
    if (!this.down) this.view.message = this.rootMessage;
    this.watcher?.dispose();
    const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(root), "**/*.md"));
    const later = () => this.reloadSoon();
    w.onDidCreate(later);
    w.onDidDelete(later);
    w.onDidChange(later);
    this.watcher = w;
  }

  get filter(): TreeFilter {
    return this.filterState;
  }

  /** Shows only the memories the filter keeps (the Changes section is never filtered). */
  setFilter(f: TreeFilter): void {
    this.filterState = f;
    this.view.description = describeFilter(f);
    void vscode.commands.executeCommand("setContext", "kinMemory.treeFiltered", isFiltering(f));
    this.changed.fire(undefined);
  }

  /**
   * The server is down for a cause the person was told (`kind`), or runs again (undefined). While it is
   * down the view shows what happened and the actions that fix it (its welcome content for that kind),
   * never the last listing as if it were current.
   */
  serverDown(kind: string | undefined): void {
    void vscode.commands.executeCommand("setContext", "kinMemory.serverDown", kind ?? false);
    if (kind === undefined) {
      if (this.down) {
        this.down = false;
        this.view.message = this.rootMessage;
        this.reload();
      }
      return;
    }
    this.down = true;
    this.memories = [];
    this.changes = [];
    this.view.badge = undefined;
    this.view.message = undefined; // a message would hide the welcome content that has the buttons
    this.changed.fire(undefined);
  }

  /**
   * {@link reload} shortly: the triggers within QUIET_MS of the first become one reload. Not pushed back
   * by each new trigger: a steady stream of them (file events, diagnostics) must not keep the tree stale.
   */
  reloadSoon(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reload();
    }, QUIET_MS);
  }

  /** Fetches the listing again (coalescing bursts) and redraws the tree. */
  reload(): void {
    if (this.loading) {
      this.again = true;
      return;
    }
    let ok = false;
    this.loading = (async () => {
      do {
        this.again = false;
        try {
          this.memories = await this.fetch();
          ok = true;
          this.changes = await this.fetchChanges();
          const n = this.changes.length;
          this.view.badge = n ? { value: n, tooltip: changesBadgeTooltip(n) } : undefined;
        } catch {
          // The server is not running or (re)starting: keep the last listing.
        }
      } while (this.again);
    })().finally(() => {
      this.loading = undefined;
      this.changed.fire(undefined);
      if (ok) this.loaded.fire(this.memories);
    });
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const changes: Node[] = this.changes.length ? [{ kind: "changes", changes: this.changes }] : [];
      return [...changes, ...groupByCategory(filterMemories(this.memories, this.filterState)).map((g): Node => ({ kind: "category", category: g.category, memories: g.memories }))];
    }
    if (node.kind === "changes") return node.changes.map((change) => ({ kind: "change", change }));
    return node.kind === "category" ? node.memories.map((memory) => ({ kind: "memory", memory })) : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "changes") {
      const item = new vscode.TreeItem("Changes", vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.changes.length} since your last review`;
      item.contextValue = "changes";
      item.iconPath = new vscode.ThemeIcon("diff");
      item.id = "changes";
      return item;
    }
    if (node.kind === "change") {
      const c = node.change;
      // The file's name, then who changed it and when (the icon says created, changed or deleted), then
      // its folder, cut off first at a narrow sidebar: the memory's own row below keeps the full path.
      const rel = c.path.replace(/^\/memories\//, "");
      const slash = rel.lastIndexOf("/");
      const item = new vscode.TreeItem(rel.slice(slash + 1), vscode.TreeItemCollapsibleState.None);
      item.id = "change:" + c.path;
      item.description = changeDescription(c) + (slash >= 0 ? ` · in ${rel.slice(0, slash)}` : "");
      item.contextValue = "change";
      item.iconPath = new vscode.ThemeIcon(c.kind === "created" ? "diff-added" : c.kind === "deleted" ? "diff-removed" : "diff-modified");
      item.tooltip = `${c.path}\n${changeSentence(c)}`;
      item.accessibilityInformation = { label: `${rel}, ${changeSentence(c)}` };
      item.command = { command: "kinMemory.openChange", title: "Show the change", arguments: [node] };
      return item;
    }
    if (node.kind === "category") {
      const item = new vscode.TreeItem(node.category, vscode.TreeItemCollapsibleState.Expanded);
      const c = countStatuses(node.memories);
      const flags = [c.stale && `${c.stale} stale`, c.expiring && `${c.expiring} expiring`, c.expired && `${c.expired} expired`].filter(Boolean);
      item.description = [String(node.memories.length), ...flags].join(" · ");
      item.contextValue = "category";
      item.iconPath = new vscode.ThemeIcon("folder-library");
      item.id = "category:" + node.category;
      return item;
    }
    const m = node.memory;
    const label = m.path.replace(/^\/memories\//, "");
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
    const badge = memoryBadge(m);
    item.id = "memory:" + m.path;
    item.description = badge.description;
    item.contextValue = badge.contextValue;
    const color = m.status === "expired" ? "list.errorForeground" : m.status === "stale" || m.status === "expiring"
      ? "list.warningForeground" : undefined;
    item.iconPath = new vscode.ThemeIcon(badge.icon, color ? new vscode.ThemeColor(color) : undefined);
    const tip = new vscode.MarkdownString();
    tip.appendText(`${m.path}\n${m.category} · ${m.status} · ${m.visible ? "visible here" : "not visible from this workspace"}`);
    if (m.workspace) tip.appendText(`\nworkspace: ${m.workspace}`);
    item.tooltip = tip;
    item.resourceUri = vscode.Uri.parse(m.uri);
    item.command = { command: "vscode.open", title: "Open memory", arguments: [vscode.Uri.parse(m.uri)] };
    return item;
  }
}
