// When the server is down: one message per cause, in the editor's words (no literal backticks), each with
// the actions that fix it. No `vscode` import (unit-tested in plain Node): client.ts shows the messages.

/** Crashes within this window beyond this count stop the automatic restarts. */
export const CRASH_LIMIT = 4;
export const CRASH_WINDOW_MS = 3 * 60_000;

export const OPEN_SETTINGS = "Open Settings";
export const RESTART = "Restart";
export const SHOW_OUTPUT = "Show output";

export type DownCause =
  | { kind: "missing"; detail: string } // no server found, none bundled
  | { kind: "failed"; command: string } // the process did not start or answer
  | { kind: "crashed"; count: number; minutes: number }; // it kept stopping: no more automatic restarts

export interface DownMessage {
  /** The same cause is told once, until the server runs again. */
  key: string;
  message: string;
  actions: string[];
}

export function downMessage(cause: DownCause): DownMessage {
  switch (cause.kind) {
    case "missing":
      return { key: "missing", message: `Kin Memory: ${unquote(cause.detail)}`, actions: [OPEN_SETTINGS, SHOW_OUTPUT] };
    case "failed":
      return {
        key: `failed:${cause.command}`,
        message: `Kin Memory: the language server (${cause.command}) did not start. Check the Kin Memory: Server Path setting, or see the output for why.`,
        actions: [OPEN_SETTINGS, RESTART, SHOW_OUTPUT],
      };
    case "crashed":
      return {
        key: "crashed",
        message: `Kin Memory: the language server stopped unexpectedly ${cause.count} times in ${cause.minutes} minutes, so it is not restarted automatically. The output says why.`,
        actions: [RESTART, SHOW_OUTPUT],
      };
  }
}

/** A message shown as plain text: `code` spans become quoted words. */
export function unquote(text: string): string {
  return text.replace(/`([^`]*)`/g, "\"$1\"");
}

/** The crashes of the running server: whether the next one is still restarted automatically. */
export class CrashCounter {
  private times: number[] = [];

  /** Records a crash at `now`; true while the server should be restarted. */
  crashed(now: number): boolean {
    this.times = [...this.times.filter((t) => now - t < CRASH_WINDOW_MS), now];
    return this.times.length < CRASH_LIMIT;
  }

  get count(): number {
    return this.times.length;
  }

  reset(): void {
    this.times = [];
  }
}
