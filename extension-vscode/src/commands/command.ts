// What every command module shares: registration that reports a failure (an error toast that can open
// the output) instead of letting VS Code swallow a rejected promise.
import * as vscode from "vscode";
import type { ServerClient } from "../client";

/** The part of the client the commands use. */
export type Client = Pick<ServerClient, "exec" | "ensure" | "report">;

export function command(id: string, run: (...args: unknown[]) => unknown, report: (err: unknown) => void): vscode.Disposable {
  return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
    try {
      return await run(...args);
    } catch (err) {
      report(err);
      return undefined;
    }
  });
}
