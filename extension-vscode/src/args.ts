// The arguments the palette commands send, shaped from what the user typed or picked. No `vscode`
// import (unit-tested in plain Node); the types come from the generated protocol mirror, so a renamed
// or retyped server parameter breaks the build here rather than at run time.
import * as path from "node:path";
import type { Category, MarkReviewedParams, ReflectParams, SearchParams, SweepParams, ToolParams } from "./protocol";
import { CATEGORY_INFO } from "./present";

/**
 * The search request for what the user typed (`category:…`, `status:…` and `age:<N` words in it are
 * filters the server reads); `everywhere` is the operator's view (every workspace's memories).
 */
export function searchArgs(query: string, limit = 20, everywhere = false): SearchParams {
  return everywhere ? { query: query.trim(), limit, workspace: "none" } : { query: query.trim(), limit };
}

export function reflectArgs(transcript: string): ReflectParams {
  return { transcript };
}

/** A dry run (no token), or the real sweep of exactly the list the dry run answered with `token`. */
export function sweepArgs(dryRun: boolean, token?: string | null): SweepParams {
  return dryRun || !token ? { dryRun: true } : { dryRun: false, token };
}

/** The tool input that deletes one memory (the tool's guard and audit log apply). */
export function deleteToolInput(vpath: string): ToolParams {
  // The person picked this memory: the operator's view, so another workspace's memory can be deleted too.
  return { command: "delete", path: vpath, workspace: "none" };
}

/**
 * The argument of the "Delete this memory" quick fix (`kinMemory.confirmDelete {uri, path}`), checked:
 * the path must be a memory's virtual path; undefined otherwise.
 */
export function confirmDeleteArg(arg: unknown): { uri: string; path: string } | undefined {
  if (!arg || typeof arg !== "object") return undefined;
  const o = arg as { uri?: unknown; path?: unknown };
  if (typeof o.uri !== "string" || typeof o.path !== "string") return undefined;
  if (!o.path.startsWith("/memories/") || o.path.length <= "/memories/".length) return undefined;
  return { uri: o.uri, path: o.path };
}

export function markReviewedArgs(uri: string): MarkReviewedParams {
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

export function createToolInput(vpath: string, text: string): ToolParams {
  return { command: "create", path: vpath, file_text: text };
}
