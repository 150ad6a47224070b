// The status bar item: stale and expiring counts from the last listing; a click opens the Kin Memory view.
import * as vscode from "vscode";
import { countStatuses, statusBarText } from "./present";
import type { MemoryEntry } from "./protocol";

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
    this.item.tooltip = "Kin Memory: the server is not running. Click to open the Kin Memory view; Kin Memory: Show server output says why.";
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
