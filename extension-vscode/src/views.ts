// The "Kin Memory" tree (memories grouped by category with lifecycle badges) and the status bar item.
import * as vscode from "vscode";
import { countStatuses, groupByCategory, memoryBadge, type MemoryEntry, statusBarText } from "./shape";

type Node = { kind: "category"; category: string; memories: MemoryEntry[] } | { kind: "memory"; memory: MemoryEntry };

export class MemoryTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly loaded = new vscode.EventEmitter<MemoryEntry[]>();
  readonly onDidLoad = this.loaded.event;
  private memories: MemoryEntry[] = [];
  private loading: Promise<void> | undefined;
  private again = false;

  constructor(private readonly fetch: () => Promise<MemoryEntry[]>) {}

  dispose(): void {
    this.changed.dispose();
    this.loaded.dispose();
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
      return groupByCategory(this.memories).map((g) => ({ kind: "category", category: g.category, memories: g.memories }));
    }
    return node.kind === "category" ? node.memories.map((memory) => ({ kind: "memory", memory })) : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
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

export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("kinMemory.status", vscode.StatusBarAlignment.Left, 50);

  constructor() {
    this.item.name = "Kin Memory";
    this.item.command = "workbench.view.extension.kin-memory";
    this.item.text = "$(book) Kin Memory";
    this.item.tooltip = "Kin Memory: starting the server…";
  }

  running(): void {
    this.item.show();
  }

  stopped(): void {
    this.item.text = "$(book) Kin Memory: stopped";
    this.item.tooltip = "Kin Memory: the server is not running. Click to open the memory tree.";
    this.item.show();
  }

  update(memories: MemoryEntry[]): void {
    const { text, tooltip } = statusBarText(countStatuses(memories));
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
