// What "Sync the store through git" and "Open both versions side by side" show, without VS Code: the
// message after a sync and the titles of a conflict's two sides (unit-tested in test/sync_present.test.ts).
import { printablePath } from "./present";
import type { ConflictVersionsResult, SyncResult } from "./protocol";

export interface SyncMessage {
  text: string;
  /** a conflict was left (KM800 marks it): a warning that offers the Problems panel */
  warn: boolean;
}

/**
 * The server's sentences as one message (a warning when a conflict was left); the sentence about secrets
 * that went out is left to {@link secretWarning}, a warning of its own.
 */
export function syncMessage(res: SyncResult): SyncMessage {
  const said = (res.summary ?? []).map((s) => s.trim()).filter((s) => s && !((res.secrets ?? []).length && /\(KM602\)/.test(s))).join(" ");
  return { text: `Kin Memory: ${said || "the sync is done."}`, warn: (res.conflicts ?? []).length > 0 };
}

/** The warning when memories that look like they hold a secret went to the remote (undefined when none did). */
export function secretWarning(res: Pick<SyncResult, "secrets">, max = 3): string | undefined {
  const paths = res.secrets ?? [];
  if (!paths.length) return undefined;
  const shown = paths.slice(0, max).map((p) => printablePath(p)).join(", ") + (paths.length > max ? ` and ${paths.length - max} more` : "");
  const said = paths.length === 1 ? "A memory that went to the remote looks like it holds" : `${paths.length} memories that went to the remote look like they hold`;
  return `Kin Memory: ${said} a secret: ${shown}. Keep the remote private, or move the secret out of the store.`;
}

/** A remote's address as typed: a reason when it cannot be one, undefined when it can. */
export function remoteProblem(value: string): string | undefined {
  if (!value.trim()) return "Give the address of a git repository: a folder, an ssh or an https URL.";
  if (/[\r\n]/.test(value)) return "An address is one line.";
  return undefined;
}

export interface ConflictSides {
  /** this machine's version, left */
  mine: { label: string; text: string };
  /** the other machine's version, right */
  theirs: { label: string; text: string };
  /** the diff editor's title */
  title: string;
}

/** The two sides of a conflict as documents: a deleted side is an empty document that says so. */
export function conflictSides(v: ConflictVersionsResult): ConflictSides {
  const name = v.path.slice(v.path.lastIndexOf("/") + 1) || v.path;
  const mine = v.mine === null ? "deleted on this machine" : "this machine";
  const theirs = v.theirs === null ? `deleted on ${v.other}` : v.other;
  return {
    mine: { label: mine, text: v.mine ?? "" },
    theirs: { label: theirs, text: v.theirs ?? "" },
    title: `${name} (${mine} ↔ ${theirs})`,
  };
}
