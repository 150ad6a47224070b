// "Initialize memories from this repository", "Consolidate memories…" and "Show consolidation
// candidates": the model passes besides reflection, reviewed exactly like a reflection's proposal (every
// diff open at once, then Apply all, Apply selected… or Discard; see reflect.ts), and the candidates a
// consolidation would work on, which need no model: each group opens side by side.
import * as vscode from "vscode";
import { candidateLabel } from "../present";
import type { ConsolidationCandidate } from "../protocol";
import type { StoreRoot } from "../root";
import { type Client, command } from "./command";
import { type Review, configured, decide } from "./proposal_review";

interface Deps {
  client: Client;
  root: StoreRoot;
  refresh: () => void;
}

export function register(deps: Deps, review: Review): vscode.Disposable[] {
  const report = (e: unknown) => deps.client.report(e);
  return [
    command("kinMemory.init", (folder?: unknown) => init(deps, review, folder), report),
    command("kinMemory.consolidate", () => consolidate(deps, review), report),
    command("kinMemory.consolidationCandidates", () => candidates(deps), report),
    command("kinMemory.openCandidateGroup", (group?: unknown) => openGroup(group as ConsolidationCandidate), report),
    // The memories of a group, read-only: comparing two memories must not copy one's lines into the other.
    vscode.workspace.registerTextDocumentContentProvider(SIDE_SCHEME, {
      provideTextDocumentContent: async (uri) => new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(uri.path))),
    }),
  ];
}

const SIDE_SCHEME = "kin-memory-side";

/** A memory file as a read-only document of the same name. */
function readOnly(uri: vscode.Uri): vscode.Uri {
  return uri.scheme === "file" ? vscode.Uri.from({ scheme: SIDE_SCHEME, path: uri.fsPath }) : uri;
}

/** The repository to read: the one open folder outside the store, a pick among several, else a dialog. */
async function pickRepository(root: StoreRoot, arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg; // from the Explorer's context menu
  const folders = (vscode.workspace.workspaceFolders ?? [])
    .filter((f) => f.uri.scheme === "file" && !root.isMemoryFile(vscode.Uri.joinPath(f.uri, "x.md").fsPath));
  if (folders.length === 1) return folders[0].uri;
  if (folders.length > 1) {
    const pick = await vscode.window.showWorkspaceFolderPick({ placeHolder: "Initialize memories from which repository?" });
    return pick?.uri;
  }
  const picked = await vscode.window.showOpenDialog({
    title: "Initialize memories from repository", openLabel: "Initialize", canSelectFiles: false, canSelectFolders: true,
    canSelectMany: false,
  });
  return picked?.[0];
}

async function init(deps: Deps, review: Review, arg: unknown): Promise<void> {
  if (!(await configured())) return;
  const folder = await pickRepository(deps.root, arg);
  if (!folder) return;
  const proposal = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Kin Memory: reading the repository's documents", cancellable: true },
    (_progress, token) => deps.client.exec("kin.memory.init", { folder: folder.fsPath }, token),
  );
  await decide(deps, review, proposal);
}

async function consolidate(deps: Deps, review: Review): Promise<void> {
  if (!(await configured())) return;
  const proposal = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Kin Memory: consolidating memories", cancellable: true },
    (_progress, token) => deps.client.exec("kin.memory.consolidate", {}, token),
  );
  await decide(deps, review, proposal);
}

/** The candidate groups in a list; the chosen one opens side by side (a pair as a diff). */
async function candidates(deps: Deps): Promise<void> {
  const found = (await deps.client.exec("kin.memory.consolidationCandidates", {})).candidates;
  if (!found.length) {
    void vscode.window.showInformationMessage("Kin Memory: no consolidation candidates: no duplicates, contradictions, stale facts or episodes to keep.");
    return;
  }
  const pick = await vscode.window.showQuickPick(
    found.map((c) => ({ ...candidateLabel(c), candidate: c })),
    { title: `Consolidation candidates (${found.length})`, matchOnDescription: true, matchOnDetail: true },
  );
  if (pick) await openGroup(pick.candidate);
}

export async function openGroup(c: ConsolidationCandidate): Promise<void> {
  const uris = c.uris.map((u) => vscode.Uri.parse(u, true));
  if (uris.length === 2) {
    await vscode.commands.executeCommand("vscode.diff", readOnly(uris[0]), readOnly(uris[1]), `${c.kind}: ${c.paths.map((p) => p.split("/").pop()).join(" ↔ ")}`);
    return;
  }
  for (const [i, uri] of uris.entries()) {
    await vscode.window.showTextDocument(uri, { viewColumn: i === 0 ? vscode.ViewColumn.One : vscode.ViewColumn.Beside, preview: false });
  }
}
