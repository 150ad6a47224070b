"""The typed command protocol: every `kin.memory.*` command's parameters and result.

One declaration serves three readers: the language server structures arguments and unstructures results
through it, the CLI prints its `--json` output through the same result types (so the two never drift),
and `scripts/gen_protocol.py` generates the editors' mirrors from it, checked by a test.

Wire keys are camelCase; Python fields are snake_case. Parsing is strict: a value of the wrong type is an
error naming its key (a string "true" is not a boolean), unknown keys are ignored (SPEC §5).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from .protocol_sync import ConflictParams as ConflictParams
from .protocol_sync import ConflictVersionsResult as ConflictVersionsResult
from .protocol_sync import ResolveConflictParams as ResolveConflictParams
from .protocol_sync import SyncChange as SyncChange
from .protocol_sync import SyncConflict as SyncConflict
from .protocol_sync import SyncParams as SyncParams
from .protocol_sync import SyncResult as SyncResult
from .protocol_wire import WIRE_NAMES as WIRE_NAMES
from .protocol_wire import ProtocolError as ProtocolError
from .protocol_wire import converter as converter
from .protocol_wire import dump as dump
from .protocol_wire import parse as parse
from .protocol_wire import wire_name as wire_name

Category = Literal["project-fact", "preference", "episodic", "session"]
Status = Literal["ok", "stale", "expiring", "expired"]
ChangeKind = Literal["create", "edit", "rename", "delete"]
CandidateKind = Literal["duplicate", "contradiction", "stale", "promote"]
IndexStateName = Literal["building", "ready", "unavailable"]
# "tool", "proposal", "sweep", "edit", "external", "restore", "agent", "sync-resolve", "sync:<machine>"
HistorySource = str  # (the last: came in by sync from that machine, whose name is free text)
QueueKind = Literal["created", "changed", "deleted"]
RootSource = Literal["argument", "KIN_MEMORY_DIR", "editor setting", "global settings", "default"]
GroupKind = Literal["duplicate", "contradiction"]


# -- parameters ----------------------------------------------------------------------------------


@attrs.frozen
class EmptyParams:
    """Commands that take `{}` (or no argument at all)."""


@attrs.frozen
class ToolParams:
    """An Anthropic memory-tool input exactly as a model emits it (`{command, path, …}`)."""

    command: str
    input: dict[str, Any] = attrs.field(factory=dict)  # the whole object, passed to the tool as is
    # Whose memories the call may reach: absent, the session's active workspaces (as an agent's call);
    # "none", the operator's view, for an editor action on a memory the person picked (delete, rename,
    # change category). Not part of the tool's input.
    workspace: str | None = None

    @classmethod
    def from_wire(cls, value: Mapping[str, Any]) -> ToolParams:
        """The tool checks its own input: only `command` is required here (a non-string command is the
        tool's own error to report, with its exact message)."""
        if "command" not in value:
            raise ProtocolError("missing required key: command")
        scope = value.get("workspace")
        if scope is not None and not isinstance(scope, str):
            raise ProtocolError("workspace: expected a string")
        command = value["command"]
        tool_input = {k: v for k, v in value.items() if k != "workspace"}
        return cls(command=command if isinstance(command, str) else "", input=tool_input, workspace=scope)


@attrs.frozen
class SearchParams:
    query: str
    limit: int = attrs.field(default=5, validator=attrs.validators.ge(1))
    workspace: str | None = None  # "none" (or "") is the operator's unfiltered view
    category: Category | None = None  # only memories of this category
    status: Status | None = None  # only memories in this lifecycle state
    max_age_days: float | None = None  # only memories written or touched this recently


@attrs.frozen
class WorkspaceParams:
    workspace: str | None = None


@attrs.frozen
class ReflectParams:
    transcript: str  # a path or a file URI


@attrs.frozen
class LatestSessionResult:
    path: str | None  # the newest Claude Code or Codex session of the active workspace; None when none
    agent: str | None  # "Claude Code" or "Codex"
    searched: list[str]  # the folders looked in (what to tell the user when nothing was found)
    modified: float | None = None  # the session file's mtime (epoch seconds)
    size: int | None = None  # the session file's size in bytes
    first_prompt: str | None = None  # the first user prompt within the file's first 64 KB, one line


@attrs.frozen
class InitParams:
    folder: str | None = None  # a path or a file URI; the active workspace's folder when absent


@attrs.frozen
class ApplyProposalParams:
    id: str
    # The changes to apply, by their 0-based index in the proposal's `changes`; all of them when absent.
    # Never by path: a rename and a create can share one.
    changes: list[int] | None = None
    paths: list[str] | None = None  # refused with a sentence: kept so an old client is told, not ignored


@attrs.frozen
class ProposalIdParams:
    id: str


@attrs.frozen
class SweepParams:
    """A sweep deletes only with the token of the dry run whose list the user confirmed; without a token,
    or with one that is stale or unknown, it deletes nothing and answers as a dry run."""

    dry_run: bool = False
    token: str | None = None  # from the dry run's answer


@attrs.frozen
class MarkReviewedParams:
    uri: str


@attrs.frozen
class HistoryParams:
    path: str  # a virtual path (/memories/...)


@attrs.frozen
class ChangesParams:
    # Look at the disk first (a scan of the store): for an explicit request; a view refreshed after
    # file events relies on the watcher's captures instead.
    rescan: bool = False


@attrs.frozen
class VersionParams:
    path: str
    version: int


@attrs.frozen
class PathsParams:
    paths: list[str] = attrs.field(factory=list)
    all: bool = False  # every change of the queue (paths are then ignored)


@attrs.frozen
class SetMemoryEnabledParams:
    enabled: bool


@attrs.frozen
class RestampParams:
    stamp: str  # the workspace stamp to replace (a moved repository's old path)
    to: str  # the new stamp: the repository's path now, or "global"


# -- results -------------------------------------------------------------------------------------


@attrs.frozen
class ToolResult:
    content: str
    is_error: bool


@attrs.frozen
class SearchHit:
    path: str
    uri: str
    category: str
    workspace: str | None
    title: str
    snippet: str
    score: float


@attrs.frozen
class SearchResult:
    results: list[SearchHit]
    # False when the index was still catching up with the store after the bounded wait: the results
    # may miss memories (an empty list then means "not found yet", never "no such memory").
    complete: bool = True
    # Matches the workspace filter hid (memories of other workspaces); 0 in the operator's view.
    hidden: int = 0
    note: str | None = None  # why the results matched words only (the semantic layer still filling)


@attrs.frozen
class MemoryEntry:
    path: str
    uri: str
    category: str
    workspace: str | None
    visible: bool
    age_days: float
    status: Status


@attrs.frozen
class ListResult:
    memories: list[MemoryEntry]


@attrs.frozen
class ProposalChange:
    kind: ChangeKind
    path: str  # the virtual path (a rename's old path)
    new_path: str | None  # a rename's new path
    workspace: str | None  # the memory's stamp
    before: str | None  # the whole text before (None: the file does not exist yet)
    after: str | None  # the whole text after (None: deleted)
    diff: str  # unified diff of before → after


@attrs.frozen
class ProposalResult:
    """A model pass's (or bulk fix's) reviewable outcome: nothing is written until it is applied."""

    id: str
    source: str  # reflect | init | consolidate | fix
    summary: str
    tool_calls: int
    workspace: str | None  # the workspace the pass ran for
    created: float  # epoch seconds; kept 7 days
    changes: list[ProposalChange]


@attrs.frozen
class ConsolidationCandidate:
    kind: CandidateKind
    paths: list[str]  # virtual paths of the memories in the group
    uris: list[str]  # the same memories as file URIs (to open them side by side)
    reason: str


@attrs.frozen
class CandidatesResult:
    """What deserves a second look, without a model: duplicates, contradictions, stale facts, episodes to keep."""

    candidates: list[ConsolidationCandidate]


@attrs.frozen
class Conflict:
    path: str
    reason: str


@attrs.frozen
class ApplyProposalResult:
    applied: list[str]
    conflicts: list[Conflict]
    applied_changes: list[int] = attrs.field(factory=list)  # the indices of the changes applied


@attrs.frozen
class ProposalInfo:
    id: str
    source: str
    summary: str
    created: float
    paths: list[str]


@attrs.frozen
class ListProposalsResult:
    proposals: list[ProposalInfo]


@attrs.frozen
class SweepResult:
    """A dry run's `swept` is what the sweep would delete and `token` names exactly that list (a real
    sweep answers with no token); `changed` are listed files that changed since the dry run: kept."""

    swept: list[str]
    kept: int
    token: str | None = None
    changed: list[str] = attrs.field(factory=list)


@attrs.frozen
class HistoryVersion:
    version: int  # stable: a version keeps its number while it is kept
    time: float  # epoch seconds, when it was kept
    source: HistorySource  # who wrote this content
    by: str  # the same in words a person reads: "by the agent", "by you in the editor"
    bytes: int
    deleted: bool  # the memory did not exist (a deletion)


@attrs.frozen
class HistoryResult:
    path: str
    versions: list[HistoryVersion]  # newest first
    current: int | None = None  # the version the file holds (the newest, byte for byte); None: changed since


@attrs.frozen
class VersionContentResult:
    path: str
    version: int
    text: str  # the version's content (UTF-8; bytes that are not UTF-8 read as U+FFFD)


@attrs.frozen
class RestoreResult:
    path: str
    bytes: int  # written, exactly the version's bytes


@attrs.frozen
class QueueEntry:
    path: str
    uri: str
    kind: QueueKind
    since: float  # when the first unreviewed version was kept
    source: HistorySource  # who wrote the newest version
    by: str  # the same in words ("by sync from laptop")
    diff: str  # unified diff, reviewed content → now
    version: int  # the newest version
    reviewed_version: int | None  # a kept version holding the reviewed content


@attrs.frozen
class ChangesResult:
    changes: list[QueueEntry]


@attrs.frozen
class PathsResult:
    paths: list[str]  # the memories the command applied to
    conflicts: list[Conflict] = attrs.field(factory=list)


@attrs.frozen
class OkResult:
    ok: bool = True


@attrs.frozen
class IndexPreviewResult:
    text: str
    lines: int  # lines inlined
    bytes: int  # bytes inlined (UTF-8)
    truncated: bool
    cut: int  # lines past the cap, not inlined
    cut_reason: Literal["lines", "bytes"] | None  # which cap cut them
    hidden: int  # memories of other workspaces collapsed to one line


@attrs.frozen
class ReindexResult:
    files: int
    seconds: float
    cancelled: bool = False


@attrs.frozen
class SettingsFileInfo:
    path: str
    scope: Literal["global", "project"]
    exists: bool
    problems: int  # KM700/KM701 findings on it


@attrs.frozen
class IndexState:
    state: IndexStateName
    memories: int  # rows in the recall index


@attrs.frozen
class InfoResult:
    root: str
    root_source: RootSource  # how the root was resolved
    workspaces: list[str]  # the active workspaces; empty is the operator's view
    version: str
    settings_files: list[SettingsFileInfo]
    index_state: IndexState
    memory_enabled: bool


@attrs.frozen
class CategoryCounts:
    """A category's memories: each counts once in `total` and once in exactly one status (quiet wins)."""

    total: int = 0
    ok: int = 0
    stale: int = 0
    expiring: int = 0
    expired: int = 0
    quiet: int = 0  # stamped to a repository path that no longer exists (KM301)


@attrs.frozen
class ExpiringMemory:
    path: str
    uri: str
    category: Category
    expires: str  # the UTC date it is swept, YYYY-MM-DD
    days: int  # whole days left, rounded (0: within the day)


@attrs.frozen
class QuietRepository:
    workspace: str  # the stamp: a repository path that no longer exists
    paths: list[str]
    uris: list[str]


@attrs.frozen
class MemoryGroup:
    kind: GroupKind
    paths: list[str]
    uris: list[str]
    reason: str


@attrs.frozen
class PromptBlockSize:
    lines: int  # lines inlined (as kin.memory.indexPreview)
    bytes: int  # bytes inlined (UTF-8)
    max_lines: int
    max_bytes: int
    truncated: bool


@attrs.frozen
class StatsResult:
    """The store's health at a glance. Counts, what expires soon and quiet memories cover the whole store;
    groups and the prompt block are what the active workspaces see (as consolidationCandidates and
    indexPreview)."""

    by_category: dict[Category, CategoryCounts]  # every category a key
    expiring_soon: list[ExpiringMemory]  # swept within 7 days, soonest first
    quiet_by_repository: list[QuietRepository]
    groups: list[MemoryGroup]  # near-duplicates (KM601) and contradictions (KM604)
    prompt_block: PromptBlockSize
    review_queue: int  # entries of kin.memory.changes not yet reviewed
    index_state: IndexState
    memory_enabled: bool
    root: str
    root_source: RootSource
    workspaces: list[str]  # the active workspaces; empty is the operator's view


@attrs.frozen
class SetMemoryEnabledResult:
    enabled: bool  # the value written
    settings_file: str  # the global settings file written


# -- the command table ---------------------------------------------------------------------------


@attrs.frozen
class CommandSpec:
    name: str
    params: type
    result: type
    summary: str


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("kin.memory.tool", ToolParams, ToolResult, "one memory-tool call"),
    CommandSpec("kin.memory.search", SearchParams, SearchResult, "ranked recall over the visible memories"),
    CommandSpec("kin.memory.list", EmptyParams, ListResult, "every memory with its lifecycle and visibility"),
    CommandSpec(
        "kin.memory.reflect", ReflectParams, ProposalResult, "one bounded reflection pass, as a proposal"
    ),
    CommandSpec(
        "kin.memory.latestSession",
        EmptyParams,
        LatestSessionResult,
        "the newest Claude Code or Codex session of the active workspace",
    ),
    CommandSpec(
        "kin.memory.init",
        InitParams,
        ProposalResult,
        "propose a repository's first memories from its documents",
    ),
    CommandSpec(
        "kin.memory.consolidationCandidates",
        WorkspaceParams,
        CandidatesResult,
        "duplicates, contradictions, stale facts and episodes to keep, without a model",
    ),
    CommandSpec(
        "kin.memory.consolidate",
        WorkspaceParams,
        ProposalResult,
        "one model pass over the candidates, as a proposal",
    ),
    CommandSpec(
        "kin.memory.applyProposal", ApplyProposalParams, ApplyProposalResult, "write a proposal as reviewed"
    ),
    CommandSpec("kin.memory.discardProposal", ProposalIdParams, OkResult, "forget a proposal"),
    CommandSpec(
        "kin.memory.listProposals", EmptyParams, ListProposalsResult, "the proposals not yet applied"
    ),
    CommandSpec("kin.memory.sweep", SweepParams, SweepResult, "delete expired episodic and session memories"),
    CommandSpec("kin.memory.markReviewed", MarkReviewedParams, OkResult, "touch a stale project fact"),
    CommandSpec(
        "kin.memory.indexPreview", WorkspaceParams, IndexPreviewResult, "the prompt block the agent inlines"
    ),
    CommandSpec("kin.memory.reindex", EmptyParams, ReindexResult, "rebuild the recall index"),
    CommandSpec("kin.memory.info", EmptyParams, InfoResult, "the store root, workspaces and index state"),
    CommandSpec("kin.memory.history", HistoryParams, HistoryResult, "a memory's kept versions, newest first"),
    CommandSpec("kin.memory.version", VersionParams, VersionContentResult, "one kept version's content"),
    CommandSpec("kin.memory.restore", VersionParams, RestoreResult, "write a kept version back"),
    CommandSpec(
        "kin.memory.changes", ChangesParams, ChangesResult, "what changed since it was last reviewed"
    ),
    CommandSpec("kin.memory.acceptChanges", PathsParams, PathsResult, "mark changes reviewed"),
    CommandSpec(
        "kin.memory.revertChanges", PathsParams, PathsResult, "bring memories back to their reviewed content"
    ),
    CommandSpec("kin.memory.fixAll", EmptyParams, ProposalResult, "the store's safe fixes, as one proposal"),
    CommandSpec(
        "kin.memory.restamp",
        RestampParams,
        ProposalResult,
        "a new stamp for every memory of a moved repository",
    ),
    CommandSpec("kin.memory.stats", WorkspaceParams, StatsResult, "the store's health at a glance"),
    CommandSpec(
        "kin.memory.setMemoryEnabled",
        SetMemoryEnabledParams,
        SetMemoryEnabledResult,
        "turn memory on or off in the global settings file",
    ),
    CommandSpec(
        "kin.memory.sync", SyncParams, SyncResult, "commit, fetch, merge and push the store through git"
    ),
    CommandSpec(
        "kin.memory.resolveConflict", ResolveConflictParams, OkResult, "keep one side of a sync conflict"
    ),
    CommandSpec(
        "kin.memory.conflictVersions", ConflictParams, ConflictVersionsResult, "both sides of a sync conflict"
    ),
)
BY_NAME: dict[str, CommandSpec] = {c.name: c for c in COMMANDS}
