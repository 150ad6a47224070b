// "Kin Memory: Show memory health": one webview panel built from `kin.memory.stats` (health_view.ts makes
// the page). Its buttons open memories, filter the Kin Memory view to the memories behind a number, run a
// command, or flip the memory switch (`kin.memory.setMemoryEnabled`). It redraws when the tree reloads.
import * as crypto from "node:crypto";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import type { ServerClient } from "./client";
import { openGroup } from "./commands/passes";
import { type Attention, attentionKind, healthPage, type HealthTarget } from "./health_view";
import { NO_FILTER } from "./present";
import type { MemoryTree } from "./tree";

export const HEALTH_VIEW_TYPE = "kinMemory.health";

export class HealthPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private targets: HealthTarget[] = [];
  private drawing: Promise<void> | undefined;
  /** What the page shows now: an unchanged store is not redrawn (a redraw loses focus and scroll). */
  private shown = "";

  constructor(
    private readonly client: Pick<ServerClient, "exec" | "report">,
    private readonly tree: Pick<MemoryTree, "setFilter" | "reload">,
  ) {}

  dispose(): void {
    this.panel?.dispose();
  }

  /** Opens the panel (or brings it forward) with fresh numbers. */
  async show(): Promise<void> {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(HEALTH_VIEW_TYPE, "Memory health", vscode.ViewColumn.Active, {
        enableScripts: true, // only the page's own nonce'd script: it posts which button was pressed
        localResourceRoots: [], // the page loads nothing, not even from the extension
        enableFindWidget: true,
      });
      this.panel.onDidDispose(() => { this.panel = undefined; this.targets = []; this.shown = ""; });
      this.panel.webview.onDidReceiveMessage((msg: unknown) => void this.act(msg).catch((err) => this.client.report(err)));
    } else {
      this.panel.reveal();
    }
    await this.redraw();
  }

  /** Draws the page again if it is open (the store changed). */
  refreshIfOpen(): void {
    if (this.panel && !this.drawing) void this.redraw(false).catch(() => undefined);
  }

  private redraw(always = true): Promise<void> {
    this.drawing ??= (async () => {
      const [stats, list] = await Promise.all([this.client.exec("kin.memory.stats", {}), this.client.exec("kin.memory.list", {})]);
      if (!this.panel) return;
      // Ages move on every call: only what the page shows of each memory counts.
      const key = JSON.stringify([stats, (list.memories ?? []).map((m) => [m.path, m.category, m.status]), storeAttention(stats.root)]);
      if (!always && key === this.shown) return;
      this.shown = key;
      const attention = storeAttention(stats.root);
      const page = healthPage(stats, list.memories ?? [], { nonce: crypto.randomBytes(18).toString("base64"), home: os.homedir(), attention });
      this.targets = page.targets;
      this.panel.webview.html = page.html;
    })().finally(() => { this.drawing = undefined; });
    return this.drawing;
  }

  /** A message from the page: `{id}`, the index of a target this extension made; anything else is ignored. */
  private async act(msg: unknown): Promise<void> {
    const id = typeof msg === "object" && msg !== null ? (msg as { id?: unknown }).id : undefined;
    const target = typeof id === "number" && Number.isInteger(id) ? this.targets[id] : undefined;
    if (!target) return;
    switch (target.kind) {
      case "open":
        await vscode.window.showTextDocument(vscode.Uri.parse(target.uri, true), { viewColumn: vscode.ViewColumn.Beside, preview: true });
        return;
      case "filter":
        this.tree.setFilter({ ...NO_FILTER, paths: target.paths, label: target.label });
        await vscode.commands.executeCommand("workbench.view.extension.kin-memory");
        return;
      case "group":
        await openGroup(target.group);
        return;
      case "command":
        await vscode.commands.executeCommand(target.command, ...(target.args ?? []));
        return;
      case "setEnabled": {
        const res = await this.client.exec("kin.memory.setMemoryEnabled", { enabled: target.enabled });
        void vscode.window.showInformationMessage(
          `Kin Memory: memory is now ${res.enabled ? "on" : "off"} (memory_enabled = ${res.enabled} in ${res.settingsFile}).`,
        );
        await this.redraw();
        return;
      }
      case "refresh":
        await this.redraw();
        return;
    }
  }
}

/** The findings the server published for the store's memories that need action (the Problems panel's). */
function storeAttention(root: string): Attention[] {
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  const out: Attention[] = [];
  for (const [uri, diags] of vscode.languages.getDiagnostics()) {
    if (uri.scheme !== "file" || !uri.fsPath.startsWith(prefix)) continue;
    const rel = uri.fsPath.slice(prefix.length).split(path.sep).join("/");
    for (const d of diags) {
      if (d.source !== "kin-memory" && d.source !== "sync") continue;
      const code = typeof d.code === "object" ? String(d.code.value) : String(d.code ?? "");
      const kind = attentionKind(code, d.severity === vscode.DiagnosticSeverity.Error);
      if (kind) out.push({ kind, code, message: d.message, path: `/memories/${rel}`, uri: uri.toString(), line: d.range.start.line });
    }
  }
  return out;
}
