// "Reflect on transcript…": one reflection pass over a transcript file the user picks.
import * as vscode from "vscode";
import { reflectArgs } from "../args";
import { type Client, command } from "./command";

export function register(deps: { client: Client; refresh: () => void }): vscode.Disposable[] {
  const { client } = deps;
  return [command("kinMemory.reflect", () => reflect(deps), (e) => client.report(e))];
}

async function reflect({ client, refresh }: { client: Client; refresh: () => void }): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    title: "Reflect on transcript", openLabel: "Reflect", canSelectMany: false,
    filters: { Transcripts: ["jsonl", "json", "txt", "md"], "All files": ["*"] },
  });
  const file = picked?.[0];
  if (!file) return;
  const res = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Kin Memory: reflecting on the transcript", cancellable: true },
    (_progress, token) => client.exec("kin.memory.reflect", reflectArgs(file.scheme === "file" ? file.fsPath : file.toString()), token),
  );
  const n = res.changes?.length ?? 0;
  const what = n ? `${n} change${n === 1 ? "" : "s"}${res.applied ? " applied" : " proposed, not applied"}` : "nothing to write";
  void vscode.window.showInformationMessage(`Kin Memory reflection: ${what}. ${res.summary ?? ""}`.trim());
  refresh();
}
