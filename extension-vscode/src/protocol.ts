// Generated from server/kin_memory/protocol.py by scripts/gen_protocol.py. Do not edit: change the
// Python protocol and run `python scripts/gen_protocol.py` (the unit tests fail while this file is stale).

export type Category = "project-fact" | "preference" | "episodic" | "session";
export type Status = "ok" | "stale" | "expiring" | "expired";
export type ChangeKind = "create" | "edit" | "rename" | "delete";
export type CandidateKind = "duplicate" | "contradiction" | "stale" | "promote";
export type IndexStateName = "building" | "ready" | "unavailable";
export type QueueKind = "created" | "changed" | "deleted";
export type RootSource = "argument" | "KIN_MEMORY_DIR" | "editor setting" | "global settings" | "default";
export type GroupKind = "duplicate" | "contradiction";

export interface ConflictParams {
  uri: string;
}

export interface ConflictVersionsResult {
  path: string;
  /** overlap | delete-vs-edit */
  kind: string;
  /** this machine's version */
  mine: string | null;
  theirs: string | null;
  /** the other machine's name */
  other: string;
}

export interface ResolveConflictParams {
  uri: string;
  /** "mine" (this machine's version) or "theirs" (the other machine's) */
  keep: string;
}

export interface SyncChange {
  /** /memories/... */
  path: string;
  /** create | edit | delete */
  kind: string;
  /** the machine it came from (incoming) or this one (outgoing) */
  machine: string;
}

export interface SyncConflict {
  path: string;
  /** overlap | delete-vs-edit */
  kind: string;
  /** the machine whose version the file keeps */
  kept: string;
  /** the machine whose version is kept in history and in the conflict record */
  other: string;
}

export interface SyncParams {
  /** set the store's remote once (a folder, ssh or https); later syncs omit it */
  remote?: string | null;
  /** this machine's name as the others see it (as `sync --name`; default: host name) */
  name?: string | null;
}

export interface SyncResult {
  incoming: SyncChange[];
  outgoing: SyncChange[];
  conflicts: SyncConflict[];
  /** sentences: a file changed during the sync is left for the next one */
  skipped: string[];
  /** the report as sentences, for a message or a terminal */
  summary: string[];
  /** nothing was done: ask for the remote's address, then sync with it */
  needsRemote: boolean;
  /** memories that went out holding what looks like a secret */
  secrets: string[];
}

/** Commands that take `{}` (or no argument at all). */
export type EmptyParams = Record<string, never>;

/** An Anthropic memory-tool input exactly as a model emits it (`{command, path, …}`). */
export interface ToolParams {
  command: string;
  [key: string]: unknown;
}

export interface SearchParams {
  query: string;
  limit?: number;
  /** "none" (or "") is the operator's unfiltered view */
  workspace?: string | null;
  /** only memories of this category */
  category?: Category | null;
  /** only memories in this lifecycle state */
  status?: Status | null;
  /** only memories written or touched this recently */
  maxAgeDays?: number | null;
}

export interface WorkspaceParams {
  workspace?: string | null;
}

export interface ReflectParams {
  /** a path or a file URI */
  transcript: string;
}

export interface LatestSessionResult {
  /** the newest Claude Code or Codex session of the active workspace; None when none */
  path: string | null;
  /** "Claude Code" or "Codex" */
  agent: string | null;
  /** the folders looked in (what to tell the user when nothing was found) */
  searched: string[];
  /** the session file's mtime (epoch seconds) */
  modified: number | null;
  /** the session file's size in bytes */
  size: number | null;
  /** the first user prompt within the file's first 64 KB, one line */
  firstPrompt: string | null;
}

export interface InitParams {
  /** a path or a file URI; the active workspace's folder when absent */
  folder?: string | null;
}

export interface ApplyProposalParams {
  id: string;
  changes?: number[] | null;
  /** refused with a sentence: kept so an old client is told, not ignored */
  paths?: string[] | null;
}

export interface ProposalIdParams {
  id: string;
}

/**
 * A sweep deletes only with the token of the dry run whose list the user confirmed; without a token,
 * or with one that is stale or unknown, it deletes nothing and answers as a dry run.
 */
export interface SweepParams {
  dryRun?: boolean;
  /** from the dry run's answer */
  token?: string | null;
}

export interface MarkReviewedParams {
  uri: string;
}

export interface HistoryParams {
  /** a virtual path (/memories/...) */
  path: string;
}

export interface ChangesParams {
  rescan?: boolean;
}

export interface VersionParams {
  path: string;
  version: number;
}

export interface PathsParams {
  paths?: string[];
  /** every change of the queue (paths are then ignored) */
  all?: boolean;
}

export interface SetMemoryEnabledParams {
  enabled: boolean;
}

export interface RestampParams {
  /** the workspace stamp to replace (a moved repository's old path) */
  stamp: string;
  /** the new stamp: the repository's path now, or "global" */
  to: string;
}

export interface ToolResult {
  content: string;
  isError: boolean;
}

export interface SearchHit {
  path: string;
  uri: string;
  category: string;
  workspace: string | null;
  title: string;
  snippet: string;
  score: number;
}

export interface SearchResult {
  results: SearchHit[];
  complete: boolean;
  hidden: number;
  /** why the results matched words only (the semantic layer still filling) */
  note: string | null;
}

export interface MemoryEntry {
  path: string;
  uri: string;
  category: string;
  workspace: string | null;
  visible: boolean;
  ageDays: number;
  status: Status;
}

export interface ListResult {
  memories: MemoryEntry[];
}

export interface ProposalChange {
  kind: ChangeKind;
  /** the virtual path (a rename's old path) */
  path: string;
  /** a rename's new path */
  newPath: string | null;
  /** the memory's stamp */
  workspace: string | null;
  /** the whole text before (None: the file does not exist yet) */
  before: string | null;
  /** the whole text after (None: deleted) */
  after: string | null;
  /** unified diff of before → after */
  diff: string;
}

/** A model pass's (or bulk fix's) reviewable outcome: nothing is written until it is applied. */
export interface ProposalResult {
  id: string;
  /** reflect | init | consolidate | fix */
  source: string;
  summary: string;
  toolCalls: number;
  /** the workspace the pass ran for */
  workspace: string | null;
  /** epoch seconds; kept 7 days */
  created: number;
  changes: ProposalChange[];
}

export interface ConsolidationCandidate {
  kind: CandidateKind;
  /** virtual paths of the memories in the group */
  paths: string[];
  /** the same memories as file URIs (to open them side by side) */
  uris: string[];
  reason: string;
}

/** What deserves a second look, without a model: duplicates, contradictions, stale facts, episodes to keep. */
export interface CandidatesResult {
  candidates: ConsolidationCandidate[];
}

export interface Conflict {
  path: string;
  reason: string;
}

export interface ApplyProposalResult {
  applied: string[];
  conflicts: Conflict[];
  /** the indices of the changes applied */
  appliedChanges: number[];
}

export interface ProposalInfo {
  id: string;
  source: string;
  summary: string;
  created: number;
  paths: string[];
}

export interface ListProposalsResult {
  proposals: ProposalInfo[];
}

/**
 * A dry run's `swept` is what the sweep would delete and `token` names exactly that list (a real
 * sweep answers with no token); `changed` are listed files that changed since the dry run: kept.
 */
export interface SweepResult {
  swept: string[];
  kept: number;
  token: string | null;
  changed: string[];
}

export interface HistoryVersion {
  /** stable: a version keeps its number while it is kept */
  version: number;
  /** epoch seconds, when it was kept */
  time: number;
  /** who wrote this content */
  source: string;
  /** the same in words a person reads: "by the agent", "by you in the editor" */
  by: string;
  bytes: number;
  /** the memory did not exist (a deletion) */
  deleted: boolean;
}

export interface HistoryResult {
  path: string;
  /** newest first */
  versions: HistoryVersion[];
  /** the version the file holds (the newest, byte for byte); None: changed since */
  current: number | null;
}

export interface VersionContentResult {
  path: string;
  version: number;
  /** the version's content (UTF-8; bytes that are not UTF-8 read as U+FFFD) */
  text: string;
}

export interface RestoreResult {
  path: string;
  /** written, exactly the version's bytes */
  bytes: number;
}

export interface QueueEntry {
  path: string;
  uri: string;
  kind: QueueKind;
  /** when the first unreviewed version was kept */
  since: number;
  /** who wrote the newest version */
  source: string;
  /** the same in words ("by sync from laptop") */
  by: string;
  /** unified diff, reviewed content → now */
  diff: string;
  /** the newest version */
  version: number;
  /** a kept version holding the reviewed content */
  reviewedVersion: number | null;
}

export interface ChangesResult {
  changes: QueueEntry[];
}

export interface PathsResult {
  /** the memories the command applied to */
  paths: string[];
  conflicts: Conflict[];
}

export interface OkResult {
  ok: boolean;
}

export interface IndexPreviewResult {
  text: string;
  /** lines inlined */
  lines: number;
  /** bytes inlined (UTF-8) */
  bytes: number;
  truncated: boolean;
  /** lines past the cap, not inlined */
  cut: number;
  /** which cap cut them */
  cutReason: "lines" | "bytes" | null;
  /** memories of other workspaces collapsed to one line */
  hidden: number;
}

export interface ReindexResult {
  files: number;
  seconds: number;
  cancelled: boolean;
}

export interface SettingsFileInfo {
  path: string;
  scope: "global" | "project";
  exists: boolean;
  /** KM700/KM701 findings on it */
  problems: number;
}

export interface IndexState {
  state: IndexStateName;
  /** rows in the recall index */
  memories: number;
}

export interface InfoResult {
  root: string;
  /** how the root was resolved */
  rootSource: RootSource;
  /** the active workspaces; empty is the operator's view */
  workspaces: string[];
  version: string;
  settingsFiles: SettingsFileInfo[];
  indexState: IndexState;
  memoryEnabled: boolean;
}

/** A category's memories: each counts once in `total` and once in exactly one status (quiet wins). */
export interface CategoryCounts {
  total: number;
  ok: number;
  stale: number;
  expiring: number;
  expired: number;
  /** stamped to a repository path that no longer exists (KM301) */
  quiet: number;
}

export interface ExpiringMemory {
  path: string;
  uri: string;
  category: Category;
  /** the UTC date it is swept, YYYY-MM-DD */
  expires: string;
  /** whole days left, rounded (0: within the day) */
  days: number;
}

export interface QuietRepository {
  /** the stamp: a repository path that no longer exists */
  workspace: string;
  paths: string[];
  uris: string[];
}

export interface MemoryGroup {
  kind: GroupKind;
  paths: string[];
  uris: string[];
  reason: string;
}

export interface PromptBlockSize {
  /** lines inlined (as kin.memory.indexPreview) */
  lines: number;
  /** bytes inlined (UTF-8) */
  bytes: number;
  maxLines: number;
  maxBytes: number;
  truncated: boolean;
}

/**
 * The store's health at a glance. Counts, what expires soon and quiet memories cover the whole store;
 * groups and the prompt block are what the active workspaces see (as consolidationCandidates and
 * indexPreview).
 */
export interface StatsResult {
  /** every category a key */
  byCategory: Record<Category, CategoryCounts>;
  /** swept within 7 days, soonest first */
  expiringSoon: ExpiringMemory[];
  quietByRepository: QuietRepository[];
  /** near-duplicates (KM601) and contradictions (KM604) */
  groups: MemoryGroup[];
  promptBlock: PromptBlockSize;
  /** entries of kin.memory.changes not yet reviewed */
  reviewQueue: number;
  indexState: IndexState;
  memoryEnabled: boolean;
  root: string;
  rootSource: RootSource;
  /** the active workspaces; empty is the operator's view */
  workspaces: string[];
}

export interface SetMemoryEnabledResult {
  /** the value written */
  enabled: boolean;
  /** the global settings file written */
  settingsFile: string;
}

/** Every `kin.memory.*` command: its parameter type, then its result type. */
export interface CommandMap {
  /** one memory-tool call */
  "kin.memory.tool": [ToolParams, ToolResult];
  /** ranked recall over the visible memories */
  "kin.memory.search": [SearchParams, SearchResult];
  /** every memory with its lifecycle and visibility */
  "kin.memory.list": [EmptyParams, ListResult];
  /** one bounded reflection pass, as a proposal */
  "kin.memory.reflect": [ReflectParams, ProposalResult];
  /** the newest Claude Code or Codex session of the active workspace */
  "kin.memory.latestSession": [EmptyParams, LatestSessionResult];
  /** propose a repository's first memories from its documents */
  "kin.memory.init": [InitParams, ProposalResult];
  /** duplicates, contradictions, stale facts and episodes to keep, without a model */
  "kin.memory.consolidationCandidates": [WorkspaceParams, CandidatesResult];
  /** one model pass over the candidates, as a proposal */
  "kin.memory.consolidate": [WorkspaceParams, ProposalResult];
  /** write a proposal as reviewed */
  "kin.memory.applyProposal": [ApplyProposalParams, ApplyProposalResult];
  /** forget a proposal */
  "kin.memory.discardProposal": [ProposalIdParams, OkResult];
  /** the proposals not yet applied */
  "kin.memory.listProposals": [EmptyParams, ListProposalsResult];
  /** delete expired episodic and session memories */
  "kin.memory.sweep": [SweepParams, SweepResult];
  /** touch a stale project fact */
  "kin.memory.markReviewed": [MarkReviewedParams, OkResult];
  /** the prompt block the agent inlines */
  "kin.memory.indexPreview": [WorkspaceParams, IndexPreviewResult];
  /** rebuild the recall index */
  "kin.memory.reindex": [EmptyParams, ReindexResult];
  /** the store root, workspaces and index state */
  "kin.memory.info": [EmptyParams, InfoResult];
  /** a memory's kept versions, newest first */
  "kin.memory.history": [HistoryParams, HistoryResult];
  /** one kept version's content */
  "kin.memory.version": [VersionParams, VersionContentResult];
  /** write a kept version back */
  "kin.memory.restore": [VersionParams, RestoreResult];
  /** what changed since it was last reviewed */
  "kin.memory.changes": [ChangesParams, ChangesResult];
  /** mark changes reviewed */
  "kin.memory.acceptChanges": [PathsParams, PathsResult];
  /** bring memories back to their reviewed content */
  "kin.memory.revertChanges": [PathsParams, PathsResult];
  /** the store's safe fixes, as one proposal */
  "kin.memory.fixAll": [EmptyParams, ProposalResult];
  /** a new stamp for every memory of a moved repository */
  "kin.memory.restamp": [RestampParams, ProposalResult];
  /** the store's health at a glance */
  "kin.memory.stats": [WorkspaceParams, StatsResult];
  /** turn memory on or off in the global settings file */
  "kin.memory.setMemoryEnabled": [SetMemoryEnabledParams, SetMemoryEnabledResult];
  /** commit, fetch, merge and push the store through git */
  "kin.memory.sync": [SyncParams, SyncResult];
  /** keep one side of a sync conflict */
  "kin.memory.resolveConflict": [ResolveConflictParams, OkResult];
  /** both sides of a sync conflict */
  "kin.memory.conflictVersions": [ConflictParams, ConflictVersionsResult];
}

export type CommandName = keyof CommandMap;
export type ParamsOf<K extends CommandName> = CommandMap[K][0];
export type ResultOf<K extends CommandName> = CommandMap[K][1];
