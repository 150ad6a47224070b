// How the server's results read in the UI: quick-pick items, tree badges, status bar text, summaries.
// No `vscode` import (unit-tested in plain Node); the UI layer turns these plain values into widgets.
import * as path from "node:path";
import type { Category, Conflict, HistoryVersion, IndexPreviewResult, LatestSessionResult, MemoryEntry, ProposalChange, QueueEntry, SearchHit } from "./protocol";

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export const CATEGORIES = ["project-fact", "preference", "episodic", "session"] as const satisfies readonly Category[];

export const CATEGORY_INFO: Record<Category, { folder: string; detail: string }> = {
  "project-fact": { folder: "facts", detail: "durable facts about a project; never deleted, stale after 180 days untouched" },
  preference: { folder: "prefs", detail: "how the user likes things done; never deleted, global by default" },
  episodic: { folder: "episodes", detail: "what happened; swept after 42 days" },
  session: { folder: "sessions", detail: "notes for the current session only; swept after 24 hours, never searched" },
};

/** Untrusted memory text shown as plain text: one line, no control characters, bounded length. */
export function plainSnippet(text: string | null | undefined, max = 160): string {
  const flat = (text ?? "").replace(/[\x00-\x1f\x7f]+/g, " ").replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

export interface PickItem {
  label: string;
  description: string;
  detail: string;
  uri: string;
}

/** A search hit as far as the picker needs it: memory text is untrusted, so title and snippet may be missing. */
export type HitLike = Pick<SearchHit, "path" | "uri" | "category"> & Partial<Pick<SearchHit, "workspace" | "score">>
  & { title?: string | null; snippet?: string | null };

export function searchItems(results: readonly HitLike[]): PickItem[] {
  return results.map((r) => ({
    label: plainSnippet(r.title || path.posix.basename(r.path), 80),
    description: `${r.category} · ${r.path}`,
    detail: plainSnippet(r.snippet),
    uri: r.uri,
  }));
}

export function formatAge(days: number): string {
  if (!Number.isFinite(days) || days < 0) return "";
  if (days < 1 / 24) return "just now";
  if (days < 1) return `${Math.round(days * 24)} h`;
  if (days < 60) return `${Math.round(days)} d`;
  return `${Math.round(days / 30.4)} mo`;
}

export interface Badge {
  description: string;
  icon: string;
  contextValue: string;
}

/**
 * The tree item decoration for one memory. The sidebar cuts the description off at its edge, so the most
 * useful word leads: what needs action (stale, expiring, expired), that it is not visible from here, then
 * its age; whether it is global or this workspace's comes last.
 */
export function memoryBadge(m: MemoryEntry): Badge {
  const parts: string[] = [];
  let icon = "note";
  switch (m.status) {
    case "stale":
      parts.push("stale");
      icon = "warning";
      break;
    case "expiring":
      parts.push("expiring");
      icon = "watch";
      break;
    case "expired":
      parts.push("expired");
      icon = "trash";
      break;
  }
  if (!m.visible) {
    parts.push("other workspace");
    if (icon === "note") icon = "eye-closed";
  }
  const age = formatAge(m.ageDays);
  if (age) parts.push(age);
  if (m.visible) parts.push(m.workspace && m.workspace !== "global" ? "this workspace" : "global");
  return { description: parts.join(" · "), icon, contextValue: `memory.${m.status}` };
}

export interface CategoryGroup {
  category: string;
  memories: MemoryEntry[];
}

/** Memories grouped by category, known categories first in their canonical order. */
export function groupByCategory(memories: readonly MemoryEntry[]): CategoryGroup[] {
  const groups = new Map<string, MemoryEntry[]>();
  for (const m of memories) {
    const list = groups.get(m.category) ?? [];
    list.push(m);
    groups.set(m.category, list);
  }
  const order = (c: string) => {
    const i = (CATEGORIES as readonly string[]).indexOf(c);
    return i < 0 ? CATEGORIES.length : i;
  };
  return [...groups.entries()]
    .sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b))
    .map(([category, list]) => ({ category, memories: list.sort((x, y) => x.path.localeCompare(y.path)) }));
}

export interface Counts {
  total: number;
  stale: number;
  expiring: number;
  expired: number;
}

export function countStatuses(memories: readonly MemoryEntry[]): Counts {
  const c: Counts = { total: memories.length, stale: 0, expiring: 0, expired: 0 };
  for (const m of memories) {
    if (m.status === "stale") c.stale++;
    else if (m.status === "expiring") c.expiring++;
    else if (m.status === "expired") c.expired++;
  }
  return c;
}

export function statusBarText(c: Counts): { text: string; tooltip: string } {
  const bits = [`${c.stale} stale`, `${c.expiring} expiring`];
  if (c.expired) bits.push(`${c.expired} expired`);
  return {
    text: `$(book) ${bits.join(" · ")}`,
    tooltip: `Kin Memory: ${plural(c.total, "memory", "memories")}: ${c.stale} stale, ${c.expiring} expiring, ${c.expired} expired. Click to open the Kin Memory view.`,
  };
}

export function sweepSummary(swept: readonly string[], kept: number, dryRun: boolean): string {
  if (!swept.length && !dryRun) return `Swept nothing (${kept} kept).`;
  if (!swept.length) return `Nothing to sweep: no expired memories (${kept} kept).`;
  const noun = swept.length === 1 ? "memory" : "memories";
  return dryRun
    ? `${swept.length} expired ${noun} would be deleted (${kept} kept).`
    : `Swept ${swept.length} expired ${noun} (${kept} kept).`;
}

/** A path from the store shown in a list: control characters (a newline would fake a line) escaped. */
export function printablePath(p: string): string {
  return p.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** The modal question before deleting one memory: what is true of it (history keeps it) and how it comes back. */
export function deleteQuestion(vpath: string): { message: string; detail: string } {
  return {
    message: `Delete ${printablePath(vpath)}?`,
    detail: "Its history keeps it: Revert in the Changes section of the Kin Memory view, or Show history and Restore, brings it back.",
  };
}

/** The modal question before a sweep: the count, then the files (the first `max`, then how many more). */
export function sweepQuestion(swept: readonly string[], kept: number, max = 12): { message: string; detail: string } {
  const noun = swept.length === 1 ? "memory" : "memories";
  const shown = swept.slice(0, max).map((p) => "• " + printablePath(p));
  if (swept.length > max) shown.push(`…and ${swept.length - max} more`);
  return {
    message: `Delete ${swept.length} expired ${noun}?`,
    detail: `${shown.join("\n")}\n\n${kept} other ${kept === 1 ? "memory is" : "memories are"} kept. History keeps what is deleted: Revert in the Changes section of the Kin Memory view brings a memory back.`,
  };
}

/** What the sweep reports after deleting, including the listed files it kept because they changed. */
export function sweptReport(swept: readonly string[], kept: number, changed: readonly string[]): string {
  const head = sweepSummary(swept, kept, false);
  if (!changed.length) return head;
  const noun = changed.length === 1 ? "memory changed" : "memories changed";
  return `${head} ${changed.length} listed ${noun} since the list was shown and ${changed.length === 1 ? "was" : "were"} kept: ${changed.map(printablePath).join(", ")}.`;
}

/** The caps the agent's prompt block is cut at (the server reports which one cut, the editor says it). */
const CAP_WORDS: Record<NonNullable<IndexPreviewResult["cutReason"]>, string> = { lines: "200-line", bytes: "25 KB" };

/** The toast after "Preview prompt block": size, and what the cap left out. */
export function previewSummary(res: Pick<IndexPreviewResult, "lines" | "bytes" | "truncated" | "cut" | "cutReason">): string {
  const head = `Kin Memory prompt block: ${res.lines} lines, ${res.bytes} bytes`;
  if (res.cutReason && res.cut > 0) {
    const noun = res.cut === 1 ? "line" : "lines";
    return `${head}. ${res.cut} ${noun} past the ${CAP_WORDS[res.cutReason]} cap ${res.cut === 1 ? "is" : "are"} not inlined.`;
  }
  return res.truncated ? `${head} — truncated at the cap: the rest is not in the prompt.` : `${head}.`;
}

/** One proposed change as a line: "create /memories/prefs/x.md", "rename a.md → b.md" (paths printable). */
export function changeLabel(c: Pick<ProposalChange, "kind" | "path" | "newPath">): string {
  return c.kind === "rename"
    ? `rename ${printablePath(c.path)} → ${printablePath(c.newPath ?? "?")}`
    : `${c.kind} ${printablePath(c.path)}`;
}


/** The title of the editor that shows every change of a proposal at once (VS Code adds the file count). */
export function proposalTitle(p: { id: string }): string {
  return `Kin Memory proposal ${p.id.slice(0, 8)}`;
}

/** One consolidation candidate group in a list: its kind and files, and why (names printable). */
export function candidateLabel(c: { kind: string; paths: readonly string[]; reason: string }): Omit<PickItem, "uri"> {
  return {
    label: `${c.kind}: ${c.paths.map((p) => printablePath(p.split("/").pop() ?? p)).join(", ")}`,
    description: "",
    detail: plainSnippet(c.reason, 200),
  };
}

/** A pass by its proposal's source, as a sentence names it: "the reflection", "the consolidation". */
export function passName(source: string): string {
  const names: Record<string, string> = {
    reflect: "the reflection", init: "the initialization", consolidate: "the consolidation", fix: "the bulk fix",
  };
  return names[source] ?? "the proposal";
}

/** VS Code shows at most this many characters of a notification (and its newlines as spaces). */
const NOTICE_MAX = 1000;

/**
 * The notification beside the review's diffs: how many changes, that nothing is written until the person
 * chooses, the model's summary with a consolidation's reason per change, and the changes (the first `max`,
 * then how many more), on one line of plain text that fits a notification.
 */
export function reviewNotice(
  p: { summary: string; source?: string; changes: readonly Pick<ProposalChange, "kind" | "path" | "newPath">[] }, max = 6,
): string {
  const listed = p.changes.slice(0, max).map((c) => "• " + changeLabel(c));
  if (p.changes.length > max) listed.push(`…and ${p.changes.length - max} more`);
  // A consolidation explains each change on a line of its own ("\n- edits …; read …"): keep each reason.
  const [head, ...lines] = p.summary.split("\n- ");
  const why = lines.slice(0, max).map((l) => "– " + plainSnippet(l, 300));
  const lead = `Kin Memory: ${passName(p.source ?? "reflect")} proposes ${plural(p.changes.length, "change", "changes")}; `
    + "the diffs are open. Nothing is written until you choose.";
  const text = [lead, plainSnippet(head, 300), ...why, ...listed].filter((t) => t).join(" ");
  return text.length <= NOTICE_MAX ? text : text.slice(0, NOTICE_MAX - 1) + "…";
}

/** What was not applied and why, as a sentence appended to the summary ("" when everything was). */
export function conflictSummary(conflicts: readonly Conflict[]): string {
  if (!conflicts.length) return "";
  return " Not applied: " + conflicts.map((c) => `${printablePath(c.path)} (${plainSnippet(c.reason, 200)})`).join("; ") + ".";
}

/**
 * The message after applying: how many of the proposed changes were written, how many the person left
 * out, and what could not be applied, and why ("applied 1 of 3 changes; 2 left out.").
 */
export function applyReport(applied: number, chosen: number, conflicts: readonly Conflict[], proposed: number = chosen): string {
  const left = Math.max(proposed - chosen, 0);
  return `Kin Memory: applied ${applied} of ${plural(proposed, "change", "changes")}${left ? `; ${left} left out` : ""}.${conflictSummary(conflicts)}`;
}

/** "3 min ago", "2 h ago", "5 d ago" for an epoch-seconds time (history and the review queue). */
export function formatSince(time: number, nowMs: number = Date.now()): string {
  const days = (nowMs / 1000 - time) / 86400;
  if (!Number.isFinite(days)) return "";
  if (days < 1 / 1440) return "just now";
  if (days < 1 / 24) return `${Math.round(days * 1440)} min ago`;
  return `${formatAge(days)} ago`;
}

export interface VersionPick {
  label: string;
  description: string;
  version: number;
  deleted: boolean;
}

/** One quick-pick row per kept version, newest first: number, who wrote it, when, size. */
/** The kept versions to pick from; the one the file holds now (`current`, from the server: the newest,
 *  byte for byte) is marked, and none when the file changed since. */
export function versionItems(versions: readonly HistoryVersion[], current: number | null | undefined,
  nowMs: number = Date.now()): VersionPick[] {
  return versions.map((v) => ({
    label: `${v.version === current ? "$(circle-filled) " : ""}Version ${v.version}`,
    description: [v.deleted ? "deleted" : `${v.bytes} bytes`, v.by, formatSince(v.time, nowMs)].join(" · "),
    version: v.version,
    deleted: v.deleted,
  }));
}

/**
 * The tree's short line for one queued change: by whom, since when (its icon shows what happened; the
 * sidebar cuts the line off at its edge, so who leads).
 */
export function changeDescription(c: Pick<QueueEntry, "by" | "since">, nowMs: number = Date.now()): string {
  return `${c.by} · ${formatSince(c.since, nowMs)}`;
}

/** The whole sentence of one queued change (its tooltip): what happened, by whom, since when. */
export function changeSentence(c: Pick<QueueEntry, "kind" | "by" | "since">, nowMs: number = Date.now()): string {
  return `${c.kind} ${c.by} · ${formatSince(c.since, nowMs)}`;
}

export function changesBadgeTooltip(count: number): string {
  return count === 1 ? "1 memory changed since your last review" : `${count} memories changed since your last review`;
}

/** What the tree shows: every chosen value of a kind matches (any of them), and every kind must match. */
export interface TreeFilter {
  categories: string[];
  statuses: string[];
  workspace?: "this" | "other";
  maxAgeDays?: number;
  /** exactly these memories (the health view's numbers), named by `label` */
  paths?: string[];
  label?: string;
}

export const NO_FILTER: TreeFilter = { categories: [], statuses: [] };

export function isFiltering(f: TreeFilter): boolean {
  return f.categories.length > 0 || f.statuses.length > 0 || f.workspace !== undefined || f.maxAgeDays !== undefined
    || f.paths !== undefined;
}

export function filterMemories(memories: readonly MemoryEntry[], f: TreeFilter): MemoryEntry[] {
  return memories.filter((m) =>
    (!f.categories.length || f.categories.includes(m.category))
    && (!f.statuses.length || f.statuses.includes(m.status))
    && (f.workspace === undefined || (f.workspace === "this") === m.visible)
    && (f.maxAgeDays === undefined || m.ageDays <= f.maxAgeDays)
    && (f.paths === undefined || f.paths.includes(m.path)));
}

/** The filter in a few words, for the view's description ("" when nothing is filtered). */
export function describeFilter(f: TreeFilter): string {
  const parts = [...(f.label !== undefined ? [f.label] : []), ...f.categories, ...f.statuses];
  if (f.workspace) parts.push(f.workspace === "this" ? "this workspace" : "other workspaces");
  if (f.maxAgeDays !== undefined) parts.push(`≤ ${f.maxAgeDays} d old`);
  return parts.length ? `filtered: ${parts.join(", ")}` : "";
}

export interface FilterPick {
  label: string;
  description?: string;
  group: "category" | "status" | "workspace" | "age";
  value: string;
  picked: boolean;
}

/** The filter's quick-pick rows, the current choices picked. */
export function filterItems(f: TreeFilter): FilterPick[] {
  const rows: FilterPick[] = [];
  for (const c of CATEGORIES) rows.push({ label: c, description: "category", group: "category", value: c, picked: f.categories.includes(c) });
  for (const s of ["stale", "expiring", "expired", "ok"]) rows.push({ label: s, description: "status", group: "status", value: s, picked: f.statuses.includes(s) });
  rows.push({ label: "this workspace", description: "visible here (and global)", group: "workspace", value: "this", picked: f.workspace === "this" });
  rows.push({ label: "other workspaces", description: "hidden from this window", group: "workspace", value: "other", picked: f.workspace === "other" });
  for (const d of [7, 30, 90]) rows.push({ label: `younger than ${d} days`, description: "age", group: "age", value: String(d), picked: f.maxAgeDays === d });
  return rows;
}

/** The filter the picked rows make (two workspace or age rows: the first of each counts). */
export function filterFrom(picked: readonly Pick<FilterPick, "group" | "value">[]): TreeFilter {
  const f: TreeFilter = { categories: [], statuses: [] };
  for (const p of picked) {
    if (p.group === "category") f.categories.push(p.value);
    else if (p.group === "status") f.statuses.push(p.value);
    else if (p.group === "workspace") f.workspace ??= p.value as "this" | "other";
    else if (p.group === "age") f.maxAgeDays ??= Number(p.value);
  }
  return f;
}

/** A size for a line of text: "48 KB", "3 MB", "120 bytes". */
export function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/**
 * The newest session in the reflect pick: which agent, when it was last written and how big it is, and
 * what the person asked first (untrusted text: plain, one line), so the person knows which session it is.
 */
export function sessionPick(
  s: Pick<LatestSessionResult, "agent" | "path" | "modified" | "size" | "firstPrompt">, nowMs: number = Date.now(),
): { label: string; description: string; detail: string } {
  // An older server (a Server Path setting) sends none of them: then the path alone.
  const when = typeof s.modified === "number" ? `${new Date(s.modified * 1000).toLocaleString()} (${formatSince(s.modified, nowMs)})` : "";
  const description = [when, typeof s.size === "number" ? formatSize(s.size) : ""].filter((t) => t).join(" · ");
  const prompt = plainSnippet(s.firstPrompt, 160);
  return {
    label: `Newest ${s.agent ?? "agent"} session of this workspace`,
    description,
    detail: prompt ? `“${prompt}” · ${printablePath(s.path ?? "")}` : printablePath(s.path ?? ""),
  };
}
