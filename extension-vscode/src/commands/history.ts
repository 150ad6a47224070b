// History and the review queue: "Show history" (a quick pick of the kept versions, then compare or
// restore), the Changes section's diff on click, accept and revert inline, "Accept all changes". Kept
// versions open as read-only documents of the `kin-memory-version` scheme, read from the server.
import * as path from "node:path";
import * as vscode from "vscode";
import { versionItems } from "../present";
import type { QueueEntry } from "../protocol";
import type { StoreRoot } from "../root";
import { type Client, command } from "./command";

export const VERSION_SCHEME = "kin-memory-version";

interface Deps {
  client: Client;
  root: Pick<StoreRoot, "current">;
  refresh: () => void;
}

/** A kept version as a document URI; version 0 is an empty document (the side of a creation or deletion). */
export function versionUri(vpath: string, version: number): vscode.Uri {
  return vscode.Uri.from({ scheme: VERSION_SCHEME, path: vpath, query: `version=${version}` });
}

class VersionDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly client: Client) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const version = Number(new URLSearchParams(uri.query).get("version"));
    if (!version) return "";
    return (await this.client.exec("kin.memory.version", { path: uri.path, version })).text;
  }
}

export function register(deps: Deps): vscode.Disposable[] {
  const report = (e: unknown) => deps.client.report(e);
  return [
    vscode.workspace.registerTextDocumentContentProvider(VERSION_SCHEME, new VersionDocuments(deps.client)),
    command("kinMemory.showHistory", (arg) => showHistory(deps, arg), report),
    command("kinMemory.openChange", (arg) => openChange(arg), report),
    command("kinMemory.acceptChange", (arg) => settle(deps, "kin.memory.acceptChanges", arg), report),
    command("kinMemory.revertChange", (arg) => settle(deps, "kin.memory.revertChanges", arg), report),
    command("kinMemory.acceptAllChanges", () => acceptAll(deps), report),
  ];
}

/** The virtual path an invocation is about: a tree node, a `{path}`, a URI, else the active editor's file. */
function vpathOf(deps: Deps, arg: unknown): string | undefined {
  if (arg && typeof arg === "object") {
    const o = arg as { path?: unknown; memory?: { path?: unknown }; change?: { path?: unknown } };
    for (const p of [o.change?.path, o.memory?.path, o.path]) if (typeof p === "string" && p.startsWith("/memories/")) return p;
  }
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  const store = deps.root.current;
  if (!uri || uri.scheme !== "file" || !store) return undefined;
  const rel = path.relative(store, uri.fsPath);
  if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  return "/memories/" + rel.split(path.sep).join("/");
}

function fileUri(deps: Deps, vpath: string): vscode.Uri | undefined {
  const store = deps.root.current;
  return store ? vscode.Uri.file(path.join(store, ...vpath.slice("/memories/".length).split("/"))) : undefined;
}

async function showHistory(deps: Deps, arg?: unknown): Promise<void> {
  const vpath = vpathOf(deps, arg);
  if (!vpath) {
    void vscode.window.showWarningMessage("Kin Memory: open a memory file to see its history.");
    return;
  }
  await deps.client.ensure();
  const { versions, current } = await deps.client.exec("kin.memory.history", { path: vpath });
  if (!versions.length) {
    void vscode.window.showInformationMessage(`Kin Memory: no versions of ${vpath} are kept yet.`);
    return;
  }
  const picked = await vscode.window.showQuickPick(versionItems(versions, current), {
    title: `History of ${vpath}`,
    placeHolder: "Pick a version to compare with the current file or to restore",
  });
  if (!picked) return;
  if (picked.deleted) {
    void vscode.window.showInformationMessage(`Kin Memory: version ${picked.version} is the deletion of ${vpath}; pick an older one to restore.`);
    return;
  }
  const action = await vscode.window.showQuickPick(
    [{ label: "Compare with the current file", id: "diff" }, { label: "Restore this version", id: "restore" }],
    { title: `Version ${picked.version} of ${vpath}` },
  );
  if (action?.id === "diff") {
    const current = fileUri(deps, vpath);
    const right = current && (await exists(current)) ? current : versionUri(vpath, 0);
    await vscode.commands.executeCommand("vscode.diff", versionUri(vpath, picked.version), right,
      `${path.posix.basename(vpath)} (version ${picked.version} ↔ now)`);
  } else if (action?.id === "restore") {
    const res = await deps.client.exec("kin.memory.restore", { path: vpath, version: picked.version });
    void vscode.window.showInformationMessage(`Kin Memory: restored ${res.path} to version ${picked.version}.`);
    deps.refresh();
  }
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

function changeOf(arg: unknown): QueueEntry | undefined {
  const o = arg as { change?: QueueEntry } | undefined;
  return o?.change && typeof o.change.path === "string" ? o.change : undefined;
}

async function openChange(arg: unknown): Promise<void> {
  const change = changeOf(arg);
  if (!change) return;
  const left = versionUri(change.path, change.reviewedVersion ?? 0);
  const right = change.kind === "deleted" ? versionUri(change.path, 0) : vscode.Uri.parse(change.uri);
  await vscode.commands.executeCommand("vscode.diff", left, right,
    `${path.posix.basename(change.path)} (reviewed ↔ ${change.kind === "deleted" ? "deleted" : "now"})`);
}

async function settle(deps: Deps, name: "kin.memory.acceptChanges" | "kin.memory.revertChanges", arg: unknown): Promise<void> {
  const vpath = changeOf(arg)?.path ?? vpathOf(deps, arg);
  if (!vpath) return;
  const res = await deps.client.exec(name, { paths: [vpath] });
  for (const c of res.conflicts ?? []) void vscode.window.showWarningMessage(`Kin Memory: ${c.path} was not reverted: ${c.reason}`);
  if (name === "kin.memory.revertChanges" && res.paths.length) {
    void vscode.window.setStatusBarMessage(`Kin Memory: reverted ${vpath}`, 3000);
  }
  deps.refresh();
}

async function acceptAll(deps: Deps): Promise<void> {
  const res = await deps.client.exec("kin.memory.acceptChanges", { paths: [], all: true });
  void vscode.window.setStatusBarMessage(`Kin Memory: accepted ${res.paths.length} ${res.paths.length === 1 ? "change" : "changes"}`, 3000);
  deps.refresh();
}
