// The "Consolidation candidates" view: what a consolidation would work on, computed by the server without
// a model (near-duplicate groups, contradictions, stale facts, expired episodes worth keeping). A group
// opens its memories side by side (a pair as a diff); its rows open one memory. Loaded only while the
// view is visible (the server reads every visible memory for it), again when the store changes.
import * as vscode from "vscode";
import { candidateLabel } from "./present";
import type { ConsolidationCandidate } from "./protocol";

type Node = { kind: "group"; group: ConsolidationCandidate; n: number } | { kind: "memory"; path: string; uri: string };

export const CANDIDATES_VIEW_ID = "kinMemory.candidates";
const QUIET_MS = 500;

export class CandidatesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<Node>;
  private groups: ConsolidationCandidate[] = [];
  private timer: NodeJS.Timeout | undefined;
  private loading = false;

  /** `fetch` asks the server; it throws while the server is not running (the last list stays). */
  constructor(private readonly fetch: () => Promise<ConsolidationCandidate[]>) {
    this.view = vscode.window.createTreeView(CANDIDATES_VIEW_ID, { treeDataProvider: this });
    this.view.onDidChangeVisibility((e) => {
      if (e.visible) this.reload();
    });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.view.dispose();
    this.changed.dispose();
  }

  /** After a store change: reload in a quiet moment, only if someone is looking. */
  reloadSoon(): void {
    if (!this.view.visible) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), QUIET_MS);
  }

  reload(): void {
    if (this.loading) return;
    this.loading = true;
    void this.fetch().then((groups) => {
      this.groups = groups;
      this.view.message = groups.length ? undefined : "No duplicates, contradictions, stale facts or episodes to keep.";
    }, () => undefined).finally(() => {
      this.loading = false;
      this.changed.fire(undefined);
    });
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.groups.map((group, n) => ({ kind: "group", group, n }));
    if (node.kind === "group") return node.group.paths.map((path, i) => ({ kind: "memory", path, uri: node.group.uris[i] ?? "" }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "group") {
      const shown = candidateLabel(node.group);
      const item = new vscode.TreeItem(shown.label, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `group:${node.n}:${node.group.paths.join("|")}`;
      item.description = shown.detail;
      item.tooltip = shown.detail;
      item.contextValue = "candidate";
      item.iconPath = new vscode.ThemeIcon(ICONS[node.group.kind] ?? "question");
      item.command = { command: "kinMemory.openCandidateGroup", title: "Open side by side", arguments: [node.group] };
      return item;
    }
    const item = new vscode.TreeItem(node.path.replace(/^\/memories\//, ""), vscode.TreeItemCollapsibleState.None);
    item.resourceUri = vscode.Uri.parse(node.uri);
    item.command = { command: "vscode.open", title: "Open memory", arguments: [vscode.Uri.parse(node.uri)] };
    return item;
  }
}

const ICONS: Record<string, string> = { duplicate: "copy", contradiction: "warning", stale: "history", promote: "pinned" };
