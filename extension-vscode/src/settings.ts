// The `kinMemory` settings the extension hands to the server (and uses to start it), with the settings a
// repository must never steer taken from the user's own settings only. No `vscode` import (unit-tested in
// plain Node): callers pass VS Code's `inspect()` results in.
//
// Every key below is `machine` or `application` scope in package.json, so VS Code itself ignores a value
// in a workspace's `.vscode/settings.json` or a `.code-workspace` file. This module is the second lock:
// where VS Code would still offer a non-user value (an older VS Code, a scope changed in the manifest by
// mistake), the extension reads these keys at user level (`globalValue`, else the default) and nothing
// else, when it builds the server's command line, its initialization options and every answer to the
// server's `workspace/configuration` request.

/** Where data goes and what runs: decided by the user, never by an opened folder. */
export const USER_LEVEL_KEYS = [
  "memoryDir",
  "server.path",
  "server.args",
  "toolMode",
  "severity",
  "staleDays",
  "episodicDays",
  "sessionHours",
  "reflection.provider",
  "reflection.model",
  "reflection.baseUrl",
  "reflection.apiKeyEnv",
  "reflection.maxToolCalls",
  "reflection.timeoutSeconds",
  "history.keepVersions",
  "history.keepDays",
  "history.maxMegabytes",
  "sync.intervalMinutes",
  "sync.afterWrites",
] as const;

export type UserLevelKey = (typeof USER_LEVEL_KEYS)[number];

/** Text settings whose empty value (the Settings UI's default, editable in place) means "not set". */
export const EMPTY_IS_UNSET = [
  "memoryDir", "workspace", "server.path", "reflection.provider", "reflection.model", "reflection.baseUrl", "reflection.apiKeyEnv",
] as const;

export const SECTION = "kinMemory";

/** The parts of VS Code's `WorkspaceConfiguration.inspect()` result this module reads. */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
}

/** A setting's user-level value: the user's (or, in a remote window, the remote machine's) settings, else the default. */
export function userLevel(inspected: Inspected | undefined): unknown {
  if (!inspected) return undefined;
  return inspected.globalValue !== undefined ? inspected.globalValue : inspected.defaultValue;
}

/**
 * The `kinMemory` section as the server receives it: the effective values VS Code reports (window-scoped
 * settings such as `workspace` may come from the folder), with every {@link USER_LEVEL_KEYS} key replaced
 * by its user-level value (null when there is none, so a folder's value can never show through).
 */
export function serverSection(effective: unknown, inspect: (key: UserLevelKey) => Inspected | undefined): Record<string, unknown> {
  const out = isObject(effective) ? (JSON.parse(JSON.stringify(effective)) as Record<string, unknown>) : {};
  for (const key of USER_LEVEL_KEYS) {
    const value = userLevel(inspect(key));
    setPath(out, key.split("."), value === undefined ? null : JSON.parse(JSON.stringify(value)));
  }
  for (const key of EMPTY_IS_UNSET) {
    const parts = key.split(".");
    const parent = parts.slice(0, -1).reduce<unknown>((node, part) => (isObject(node) ? node[part] : undefined), out);
    const last = parts[parts.length - 1];
    if (isObject(parent) && typeof parent[last] === "string" && !parent[last].trim()) parent[last] = null;
  }
  return out;
}

/**
 * The answer for one `workspace/configuration` item whose section is ours (`kinMemory` or a part of it),
 * cut from {@link serverSection}'s result; undefined for another extension's section.
 */
export function configurationItem(section: string | undefined, ours: Record<string, unknown>): { value: unknown } | undefined {
  if (section !== SECTION && !section?.startsWith(SECTION + ".")) return undefined;
  let value: unknown = ours;
  for (const part of section === SECTION ? [] : section.slice(SECTION.length + 1).split(".")) {
    value = isObject(value) ? value[part] : undefined;
  }
  return { value: value === undefined ? null : value };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function setPath(target: Record<string, unknown>, parts: string[], value: unknown): void {
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isObject(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]] = value;
}
