// The server and the store as a whole: "Restart server", "Open store folder", "Show server output",
// the view's refresh button, and the offer to restart when the server settings change.
import * as vscode from "vscode";
import type { ServerClient } from "../client";
import type { StoreRoot } from "../root";
import { command } from "./command";

interface Deps {
  client: Pick<ServerClient, "ensure" | "restart" | "report" | "output">;
  root: Pick<StoreRoot, "current">;
  refresh: () => void;
}

export function register(deps: Deps): vscode.Disposable[] {
  const { client, root, refresh } = deps;
  const report = (e: unknown) => client.report(e);

  const restart = async () => {
    await client.restart();
    void vscode.window.setStatusBarMessage("Kin Memory: server restarted", 3000);
  };

  const openStoreFolder = async () => {
    // The server's root, not a guess: it alone resolves KIN_MEMORY_DIR and ~/.kin/settings.toml.
    await client.ensure();
    const store = root.current;
    if (store === undefined) throw new Error("the server has not reported its store root; see the output");
    await vscode.commands.executeCommand("vscode.openFolder", vscode.Uri.file(store), { forceNewWindow: true });
  };

  const settingsChanged = vscode.workspace.onDidChangeConfiguration(async (e) => {
    if (!e.affectsConfiguration("kinMemory.server")) return;
    const answer = await vscode.window.showInformationMessage("Kin Memory: the server settings changed; restart the server to use them.", "Restart server");
    if (answer) await restart().catch(report);
  });

  return [
    command("kinMemory.restartServer", restart, report),
    command("kinMemory.openStoreFolder", openStoreFolder, report),
    command("kinMemory.refreshTree", () => refresh(), report),
    command("kinMemory.showOutput", () => client.output.show(), report),
    settingsChanged,
  ];
}
