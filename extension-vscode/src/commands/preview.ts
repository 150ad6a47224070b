// "Preview prompt block" (a read-only virtual document with what the agent inlines) and "Reindex".
import * as vscode from "vscode";
import { previewSummary } from "../present";
import { type Client, command } from "./command";

const PREVIEW_SCHEME = "kin-memory-preview";

export function register(deps: { client: Client; refresh: () => void }): vscode.Disposable[] {
  const { client, refresh } = deps;
  // A content provider's documents are read-only: the preview cannot be mistaken for an editable file.
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const texts = new Map<string, string>();
  const provider = vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, {
    onDidChange: changed.event,
    provideTextDocumentContent: (uri) => texts.get(uri.toString()) ?? "",
  });

  const preview = async () => {
    const res = await client.exec("kin.memory.indexPreview", {});
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: "/prompt-block.md" });
    texts.set(uri.toString(), res.text ?? "");
    changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, "markdown");
    await vscode.window.showTextDocument(doc, { preview: true });
    void vscode.window.showInformationMessage(previewSummary(res));
  };

  const reindex = async () => {
    const res = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Kin Memory: reindexing", cancellable: true },
      (_p, token) => client.exec("kin.memory.reindex", {}, token),
    );
    void vscode.window.showInformationMessage(`Kin Memory: reindexed ${res.files} ${res.files === 1 ? "memory" : "memories"} in ${Number(res.seconds).toFixed(2)} s.`);
    refresh();
  };

  const report = (e: unknown) => client.report(e);
  return [changed, provider, command("kinMemory.indexPreview", preview, report), command("kinMemory.reindex", reindex, report)];
}
