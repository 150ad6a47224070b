// Argument shaping for the server's commands and the presentation of their results. No `vscode`
// import: the UI layer turns these plain values into quick-pick items, tree items and status text.
import * as path from "node:path";

export const CATEGORIES = ["project-fact", "preference", "episodic", "session"] as const;
export type Category = (typeof CATEGORIES)[number];

export const CATEGORY_INFO: Record<Category, { folder: string; detail: string }> = {
  "project-fact": { folder: "facts", detail: "durable facts about a project; never deleted, stale after 180 days untouched" },
  preference: { folder: "prefs", detail: "how the user likes things done; never deleted, global by default" },
  episodic: { folder: "episodes", detail: "what happened; swept after 42 days" },
  session: { folder: "sessions", detail: "scratch for the current session; swept after 24 hours, never indexed" },
};

export type Status = "ok" | "stale" | "expiring" | "expired";

export interface MemoryEntry {
  path: string;
  uri: string;
  category: string;
  workspace: string | null;
  visible: boolean;
  ageDays: number;
  /** One of {@link Status}; kept open so a newer server status still displays. */
  status: string;
}

export interface SearchResult {
  path: string;
  uri: string;
  category: string;
  workspace?: string | null;
  title?: string | null;
  snippet?: string | null;
  score?: number;
}

// -- command arguments ---------------------------------------------------------------------------

export function searchArgs(query: string, limit = 20): { query: string; limit: number } {
  return { query: query.trim(), limit };
}

export function reflectArgs(transcript: string, apply = true): { transcript: string; apply: boolean } {
  return { transcript, apply };
}

export function sweepArgs(dryRun: boolean): { dryRun: boolean } {
  return { dryRun };
}

export function markReviewedArgs(uri: string): { uri: string } {
  return { uri };
}

/**
 * The memory a "mark reviewed" invocation is about: a URI string, a `{uri}` object (the code lens),
 * or a tree node `{memory: {uri}}`. Undefined means "the active editor".
 */
export function uriFromArg(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg || undefined;
  if (!arg || typeof arg !== "object") return undefined;
  const o = arg as { uri?: unknown; memory?: unknown };
  if (typeof o.uri === "string" && o.uri) return o.uri;
  if (o.memory && typeof o.memory === "object") return uriFromArg(o.memory);
  return undefined;
}

/**
 * The virtual path for a new memory typed by the user (relative to the store, `.md` optional), or an
 * error message. Mirrors the tool's guard closely enough to refuse early with a readable reason.
 */
export function newMemoryPath(input: string): { path: string } | { error: string } {
  let rel = input.trim().replace(/^\/memories\//, "");
  if (!rel) return { error: "Type a name, e.g. facts/build-system" };
  if (rel.includes("\\")) return { error: "Use / to separate folders" };
  if (rel.includes("\0") || /[\x00-\x1f]/.test(rel)) return { error: "Control characters are not allowed" };
  if (rel.startsWith("/")) return { error: "Give a path inside the store, e.g. facts/build-system" };
  const parts = rel.split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) return { error: "Empty, . and .. path parts are not allowed" };
  if (parts.some((p) => p.startsWith("."))) return { error: "Hidden names (leading dot) are never memory files" };
  if (!rel.toLowerCase().endsWith(".md")) rel += ".md";
  if (rel === "MEMORY.md") return { error: "MEMORY.md is the curated index, not a memory" };
  return { path: "/memories/" + rel };
}

export function defaultNewMemoryName(category: Category): string {
  return CATEGORY_INFO[category].folder + "/";
}

export function newMemoryText(category: Category, title: string): string {
  const heading = title.trim() || "New memory";
  return `---\ncategory: ${category}\n---\n\n# ${heading}\n\n`;
}

export function titleFromPath(vpath: string): string {
  const base = path.posix.basename(vpath).replace(/\.md$/i, "");
  const words = base.replace(/[-_]+/g, " ").trim();
  return words ? words[0].toUpperCase() + words.slice(1) : "New memory";
}

export function createToolInput(vpath: string, text: string): { command: "create"; path: string; file_text: string } {
  return { command: "create", path: vpath, file_text: text };
}

// -- results ---------------------------------------------------------------------------------------

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

export function searchItems(results: readonly SearchResult[]): PickItem[] {
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

/** The tree item decoration for one memory: lifecycle badge, visibility and age. */
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
  } else if (m.workspace && m.workspace !== "global") {
    parts.push("this workspace");
  } else {
    parts.push("global");
  }
  const age = formatAge(m.ageDays);
  if (age) parts.push(age);
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
    tooltip: `Kin Memory: ${c.total} memories, ${c.stale} stale, ${c.expiring} expiring, ${c.expired} expired. Click to open the memory tree.`,
  };
}

export function sweepSummary(swept: readonly string[], kept: number, dryRun: boolean): string {
  if (!swept.length) return `Nothing to sweep: no expired memories (${kept} kept).`;
  const noun = swept.length === 1 ? "memory" : "memories";
  return dryRun
    ? `${swept.length} expired ${noun} would be deleted (${kept} kept).`
    : `Swept ${swept.length} expired ${noun} (${kept} kept).`;
}

// -- the store root --------------------------------------------------------------------------------

/** `memory_dir` from a global settings.toml (a top-level string key); undefined when absent. */
export function memoryDirFromToml(text: string): string | undefined {
  let inTable = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith("[")) {
      inTable = true;
      continue;
    }
    if (inTable) continue;
    const m = /^memory_dir\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')\s*(?:#.*)?$/.exec(line);
    if (m) return m[1] !== undefined ? m[1].replace(/\\(["\\])/g, "$1") : m[2];
  }
  return undefined;
}

export interface RootInput {
  setting: string | null | undefined;
  env: string | undefined;
  home: string;
  globalSettings: string | undefined;
}

/** The store root, in the server's resolution order: env, editor setting, global settings, default. */
export function resolveStoreRoot(input: RootInput): string {
  const expand = (p: string) => (p === "~" ? input.home : p.startsWith("~/") ? path.join(input.home, p.slice(2)) : p);
  const candidates = [input.env, input.setting, input.globalSettings ? memoryDirFromToml(input.globalSettings) : undefined];
  for (const c of candidates) {
    if (typeof c === "string" && c.trim()) return path.resolve(expand(c.trim()));
  }
  return path.join(input.home, ".kin", "memory");
}

/** Whether a file system path lies below the store root (the root itself excluded). */
export function isUnderRoot(fsPath: string, root: string): boolean {
  const rel = path.relative(root, fsPath);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/** A memory file by location: a `*.md` below the root with no hidden path component. */
export function isMemoryPath(fsPath: string, root: string): boolean {
  if (!isUnderRoot(fsPath, root) || !fsPath.toLowerCase().endsWith(".md")) return false;
  return !path.relative(root, fsPath).split(path.sep).some((p) => p.startsWith("."));
}
