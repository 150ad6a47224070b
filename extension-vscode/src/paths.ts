// Where memory files are, as path logic only (no `vscode` import, unit-tested in plain Node).
//
// The store root itself is the server's to resolve (`kin.memory.info`): this module only knows the
// bootstrap patterns the extension needs before the server runs (see root.ts) and how to test a path
// against a root once one is known.
import * as path from "node:path";
import { expandHome } from "./discovery";

/** Whether a file system path lies below the root (the root itself excluded). */
export function isUnderRoot(fsPath: string, root: string): boolean {
  const rel = path.relative(root, fsPath);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/** Whether a path is the root or lies below it. */
export function isAtOrUnder(fsPath: string, root: string): boolean {
  return path.relative(root, fsPath) === "" || isUnderRoot(fsPath, root);
}

/** A memory file by location: a `*.md` below the root with no hidden path component. */
export function isMemoryPath(fsPath: string, root: string): boolean {
  if (!isUnderRoot(fsPath, root) || !fsPath.toLowerCase().endsWith(".md")) return false;
  return !path.relative(root, fsPath).split(path.sep).some((p) => p.startsWith("."));
}

/**
 * The `.kin/memory` folder a path is or lies in (the default store's shape, which package.json's
 * `**\/.kin/memory/**` language pattern also matches), or undefined.
 */
export function conventionalRoot(fsPath: string): string | undefined {
  const parts = path.resolve(fsPath).split(path.sep);
  for (let i = parts.length - 2; i >= 0; i--) {
    if (parts[i] === ".kin" && parts[i + 1] === "memory") return parts.slice(0, i + 2).join(path.sep) || path.sep;
  }
  return undefined;
}

export interface BootstrapInput {
  /** `kinMemory.memoryDir` (machine scope), if set. */
  setting: string | null | undefined;
  /** The root the server reported the last time it ran, if any. */
  remembered: string | undefined;
  home: string;
}

/** The explicit roots of the bootstrap patterns, besides `**\/.kin/memory/**`: absolute, deduplicated. */
export function bootstrapRoots(input: BootstrapInput): string[] {
  const roots: string[] = [];
  for (const raw of [input.setting, input.remembered]) {
    if (typeof raw !== "string" || !raw.trim()) continue;
    const root = path.resolve(expandHome(raw.trim(), input.home));
    if (!roots.includes(root)) roots.push(root);
  }
  return roots;
}

/** Whether the bootstrap patterns claim a file: below a `.kin/memory` folder or below one of the roots. */
export function bootstrapClaims(fsPath: string, roots: readonly string[]): boolean {
  const conventional = conventionalRoot(fsPath);
  return [...roots, ...(conventional ? [conventional] : [])].some((r) => isMemoryPath(fsPath, r));
}

/** Whether a workspace folder is (in) a store by the bootstrap patterns: reason enough to start the server. */
export function bootstrapFolder(folder: string, roots: readonly string[]): boolean {
  return conventionalRoot(folder) !== undefined || roots.some((r) => isAtOrUnder(folder, r));
}

/**
 * Where a store may be on this machine before the server says (checked for existence only, to decide
 * whether to start the server at all): KIN_MEMORY_DIR, then the default `~/.kin/memory`. The root itself is
 * the server's to resolve; `memory_dir` in ~/.kin/settings.toml is found once the server has run (pattern 3).
 */
export function machineRoots(home: string, env: Record<string, string | undefined>): string[] {
  const roots: string[] = [];
  const fromEnv = env.KIN_MEMORY_DIR?.trim();
  if (fromEnv) roots.push(path.resolve(expandHome(fromEnv, home)));
  if (home) roots.push(path.join(home, ".kin", "memory"));
  return roots;
}

/** A root as shown in the UI: `~/…` below the home folder. */
export function displayRoot(root: string, home: string): string {
  if (!home) return root;
  const rel = path.relative(home, root);
  if (rel === "") return "~";
  return !rel.startsWith("..") && !path.isAbsolute(rel) ? "~" + path.sep + rel : root;
}

/** Where a store conventionally lives, whatever the machine: any `.kin/memory` folder. */
export const CONVENTIONAL_PATTERN = "**/.kin/memory/**/*.md";
