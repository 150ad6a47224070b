-- Generated from server/kin_memory/protocol.py by scripts/gen_protocol.py. Do not edit: change the
-- Python protocol and run `python scripts/gen_protocol.py` (the unit tests fail while this file is stale).
-- LuaLS annotations for the `kin.memory.*` commands' arguments and results; nothing at run time.

---@alias KinMemory.Category "project-fact"|"preference"|"episodic"|"session"
---@alias KinMemory.Status "ok"|"stale"|"expiring"|"expired"
---@alias KinMemory.ChangeKind "create"|"edit"|"rename"|"delete"
---@alias KinMemory.CandidateKind "duplicate"|"contradiction"|"stale"|"promote"
---@alias KinMemory.IndexStateName "building"|"ready"|"unavailable"
---@alias KinMemory.QueueKind "created"|"changed"|"deleted"
---@alias KinMemory.RootSource "argument"|"KIN_MEMORY_DIR"|"editor setting"|"global settings"|"default"
---@alias KinMemory.GroupKind "duplicate"|"contradiction"

---@class KinMemory.ConflictParams
---@field uri string

---@class KinMemory.ConflictVersionsResult
---@field path string
---@field kind string # overlap | delete-vs-edit
---@field mine string|nil # this machine's version
---@field theirs string|nil
---@field other string # the other machine's name

---@class KinMemory.ResolveConflictParams
---@field uri string
---@field keep string # "mine" (this machine's version) or "theirs" (the other machine's)

---@class KinMemory.SyncChange
---@field path string # /memories/...
---@field kind string # create | edit | delete
---@field machine string # the machine it came from (incoming) or this one (outgoing)

---@class KinMemory.SyncConflict
---@field path string
---@field kind string # overlap | delete-vs-edit
---@field kept string # the machine whose version the file keeps
---@field other string # the machine whose version is kept in history and in the conflict record

---@class KinMemory.SyncParams
---@field remote? string|nil # set the store's remote once (a folder, ssh or https); later syncs omit it
---@field name? string|nil # this machine's name as the others see it (as `sync --name`; default: host name)

---@class KinMemory.SyncResult
---@field incoming KinMemory.SyncChange[]
---@field outgoing KinMemory.SyncChange[]
---@field conflicts KinMemory.SyncConflict[]
---@field skipped string[] # sentences: a file changed during the sync is left for the next one
---@field summary string[] # the report as sentences, for a message or a terminal
---@field needsRemote boolean # nothing was done: ask for the remote's address, then sync with it
---@field secrets string[] # memories that went out holding what looks like a secret

--- Commands that take `{}` (or no argument at all).
---@class KinMemory.EmptyParams

--- An Anthropic memory-tool input exactly as a model emits it (`{command, path, …}`).
---@class KinMemory.ToolParams
---@field command string
---@field [string] any

---@class KinMemory.SearchParams
---@field query string
---@field limit? integer
---@field workspace? string|nil # "none" (or "") is the operator's unfiltered view
---@field category? KinMemory.Category|nil # only memories of this category
---@field status? KinMemory.Status|nil # only memories in this lifecycle state
---@field maxAgeDays? number|nil # only memories written or touched this recently

---@class KinMemory.WorkspaceParams
---@field workspace? string|nil

---@class KinMemory.ReflectParams
---@field transcript string # a path or a file URI

---@class KinMemory.LatestSessionResult
---@field path string|nil # the newest Claude Code or Codex session of the active workspace; None when none
---@field agent string|nil # "Claude Code" or "Codex"
---@field searched string[] # the folders looked in (what to tell the user when nothing was found)
---@field modified number|nil # the session file's mtime (epoch seconds)
---@field size integer|nil # the session file's size in bytes
---@field firstPrompt string|nil # the first user prompt within the file's first 64 KB, one line

---@class KinMemory.InitParams
---@field folder? string|nil # a path or a file URI; the active workspace's folder when absent

---@class KinMemory.ApplyProposalParams
---@field id string
---@field changes? integer[]|nil
---@field paths? string[]|nil # refused with a sentence: kept so an old client is told, not ignored

---@class KinMemory.ProposalIdParams
---@field id string

--- A sweep deletes only with the token of the dry run whose list the user confirmed; without a token,
--- or with one that is stale or unknown, it deletes nothing and answers as a dry run.
---@class KinMemory.SweepParams
---@field dryRun? boolean
---@field token? string|nil # from the dry run's answer

---@class KinMemory.MarkReviewedParams
---@field uri string

---@class KinMemory.HistoryParams
---@field path string # a virtual path (/memories/...)

---@class KinMemory.ChangesParams
---@field rescan? boolean

---@class KinMemory.VersionParams
---@field path string
---@field version integer

---@class KinMemory.PathsParams
---@field paths? string[]
---@field all? boolean # every change of the queue (paths are then ignored)

---@class KinMemory.SetMemoryEnabledParams
---@field enabled boolean

---@class KinMemory.RestampParams
---@field stamp string # the workspace stamp to replace (a moved repository's old path)
---@field to string # the new stamp: the repository's path now, or "global"

---@class KinMemory.ToolResult
---@field content string
---@field isError boolean

---@class KinMemory.SearchHit
---@field path string
---@field uri string
---@field category string
---@field workspace string|nil
---@field title string
---@field snippet string
---@field score number

---@class KinMemory.SearchResult
---@field results KinMemory.SearchHit[]
---@field complete boolean
---@field hidden integer
---@field note string|nil # why the results matched words only (the semantic layer still filling)

---@class KinMemory.MemoryEntry
---@field path string
---@field uri string
---@field category string
---@field workspace string|nil
---@field visible boolean
---@field ageDays number
---@field status KinMemory.Status

---@class KinMemory.ListResult
---@field memories KinMemory.MemoryEntry[]

---@class KinMemory.ProposalChange
---@field kind KinMemory.ChangeKind
---@field path string # the virtual path (a rename's old path)
---@field newPath string|nil # a rename's new path
---@field workspace string|nil # the memory's stamp
---@field before string|nil # the whole text before (None: the file does not exist yet)
---@field after string|nil # the whole text after (None: deleted)
---@field diff string # unified diff of before → after

--- A model pass's (or bulk fix's) reviewable outcome: nothing is written until it is applied.
---@class KinMemory.ProposalResult
---@field id string
---@field source string # reflect | init | consolidate | fix
---@field summary string
---@field toolCalls integer
---@field workspace string|nil # the workspace the pass ran for
---@field created number # epoch seconds; kept 7 days
---@field changes KinMemory.ProposalChange[]

---@class KinMemory.ConsolidationCandidate
---@field kind KinMemory.CandidateKind
---@field paths string[] # virtual paths of the memories in the group
---@field uris string[] # the same memories as file URIs (to open them side by side)
---@field reason string

--- What deserves a second look, without a model: duplicates, contradictions, stale facts, episodes to keep.
---@class KinMemory.CandidatesResult
---@field candidates KinMemory.ConsolidationCandidate[]

---@class KinMemory.Conflict
---@field path string
---@field reason string

---@class KinMemory.ApplyProposalResult
---@field applied string[]
---@field conflicts KinMemory.Conflict[]
---@field appliedChanges integer[] # the indices of the changes applied

---@class KinMemory.ProposalInfo
---@field id string
---@field source string
---@field summary string
---@field created number
---@field paths string[]

---@class KinMemory.ListProposalsResult
---@field proposals KinMemory.ProposalInfo[]

--- A dry run's `swept` is what the sweep would delete and `token` names exactly that list (a real
--- sweep answers with no token); `changed` are listed files that changed since the dry run: kept.
---@class KinMemory.SweepResult
---@field swept string[]
---@field kept integer
---@field token string|nil
---@field changed string[]

---@class KinMemory.HistoryVersion
---@field version integer # stable: a version keeps its number while it is kept
---@field time number # epoch seconds, when it was kept
---@field source string # who wrote this content
---@field by string # the same in words a person reads: "by the agent", "by you in the editor"
---@field bytes integer
---@field deleted boolean # the memory did not exist (a deletion)

---@class KinMemory.HistoryResult
---@field path string
---@field versions KinMemory.HistoryVersion[] # newest first
---@field current integer|nil # the version the file holds (the newest, byte for byte); None: changed since

---@class KinMemory.VersionContentResult
---@field path string
---@field version integer
---@field text string # the version's content (UTF-8; bytes that are not UTF-8 read as U+FFFD)

---@class KinMemory.RestoreResult
---@field path string
---@field bytes integer # written, exactly the version's bytes

---@class KinMemory.QueueEntry
---@field path string
---@field uri string
---@field kind KinMemory.QueueKind
---@field since number # when the first unreviewed version was kept
---@field source string # who wrote the newest version
---@field by string # the same in words ("by sync from laptop")
---@field diff string # unified diff, reviewed content → now
---@field version integer # the newest version
---@field reviewedVersion integer|nil # a kept version holding the reviewed content

---@class KinMemory.ChangesResult
---@field changes KinMemory.QueueEntry[]

---@class KinMemory.PathsResult
---@field paths string[] # the memories the command applied to
---@field conflicts KinMemory.Conflict[]

---@class KinMemory.OkResult
---@field ok boolean

---@class KinMemory.IndexPreviewResult
---@field text string
---@field lines integer # lines inlined
---@field bytes integer # bytes inlined (UTF-8)
---@field truncated boolean
---@field cut integer # lines past the cap, not inlined
---@field cutReason "lines"|"bytes"|nil # which cap cut them
---@field hidden integer # memories of other workspaces collapsed to one line

---@class KinMemory.ReindexResult
---@field files integer
---@field seconds number
---@field cancelled boolean

---@class KinMemory.SettingsFileInfo
---@field path string
---@field scope "global"|"project"
---@field exists boolean
---@field problems integer # KM700/KM701 findings on it

---@class KinMemory.IndexState
---@field state KinMemory.IndexStateName
---@field memories integer # rows in the recall index

---@class KinMemory.InfoResult
---@field root string
---@field rootSource KinMemory.RootSource # how the root was resolved
---@field workspaces string[] # the active workspaces; empty is the operator's view
---@field version string
---@field settingsFiles KinMemory.SettingsFileInfo[]
---@field indexState KinMemory.IndexState
---@field memoryEnabled boolean

--- A category's memories: each counts once in `total` and once in exactly one status (quiet wins).
---@class KinMemory.CategoryCounts
---@field total integer
---@field ok integer
---@field stale integer
---@field expiring integer
---@field expired integer
---@field quiet integer # stamped to a repository path that no longer exists (KM301)

---@class KinMemory.ExpiringMemory
---@field path string
---@field uri string
---@field category KinMemory.Category
---@field expires string # the UTC date it is swept, YYYY-MM-DD
---@field days integer # whole days left, rounded (0: within the day)

---@class KinMemory.QuietRepository
---@field workspace string # the stamp: a repository path that no longer exists
---@field paths string[]
---@field uris string[]

---@class KinMemory.MemoryGroup
---@field kind KinMemory.GroupKind
---@field paths string[]
---@field uris string[]
---@field reason string

---@class KinMemory.PromptBlockSize
---@field lines integer # lines inlined (as kin.memory.indexPreview)
---@field bytes integer # bytes inlined (UTF-8)
---@field maxLines integer
---@field maxBytes integer
---@field truncated boolean

--- The store's health at a glance. Counts, what expires soon and quiet memories cover the whole store;
--- groups and the prompt block are what the active workspaces see (as consolidationCandidates and
--- indexPreview).
---@class KinMemory.StatsResult
---@field byCategory table<KinMemory.Category,KinMemory.CategoryCounts> # every category a key
---@field expiringSoon KinMemory.ExpiringMemory[] # swept within 7 days, soonest first
---@field quietByRepository KinMemory.QuietRepository[]
---@field groups KinMemory.MemoryGroup[] # near-duplicates (KM601) and contradictions (KM604)
---@field promptBlock KinMemory.PromptBlockSize
---@field reviewQueue integer # entries of kin.memory.changes not yet reviewed
---@field indexState KinMemory.IndexState
---@field memoryEnabled boolean
---@field root string
---@field rootSource KinMemory.RootSource
---@field workspaces string[] # the active workspaces; empty is the operator's view

---@class KinMemory.SetMemoryEnabledResult
---@field enabled boolean # the value written
---@field settingsFile string # the global settings file written

---@alias KinMemory.CommandName
---| "kin.memory.tool" # ToolParams -> ToolResult: one memory-tool call
---| "kin.memory.search" # SearchParams -> SearchResult: ranked recall over the visible memories
---| "kin.memory.list" # EmptyParams -> ListResult: every memory with its lifecycle and visibility
---| "kin.memory.reflect" # ReflectParams -> ProposalResult: one bounded reflection pass, as a proposal
---| "kin.memory.latestSession" # EmptyParams -> LatestSessionResult: the newest Claude Code or Codex session of the active workspace
---| "kin.memory.init" # InitParams -> ProposalResult: propose a repository's first memories from its documents
---| "kin.memory.consolidationCandidates" # WorkspaceParams -> CandidatesResult: duplicates, contradictions, stale facts and episodes to keep, without a model
---| "kin.memory.consolidate" # WorkspaceParams -> ProposalResult: one model pass over the candidates, as a proposal
---| "kin.memory.applyProposal" # ApplyProposalParams -> ApplyProposalResult: write a proposal as reviewed
---| "kin.memory.discardProposal" # ProposalIdParams -> OkResult: forget a proposal
---| "kin.memory.listProposals" # EmptyParams -> ListProposalsResult: the proposals not yet applied
---| "kin.memory.sweep" # SweepParams -> SweepResult: delete expired episodic and session memories
---| "kin.memory.markReviewed" # MarkReviewedParams -> OkResult: touch a stale project fact
---| "kin.memory.indexPreview" # WorkspaceParams -> IndexPreviewResult: the prompt block the agent inlines
---| "kin.memory.reindex" # EmptyParams -> ReindexResult: rebuild the recall index
---| "kin.memory.info" # EmptyParams -> InfoResult: the store root, workspaces and index state
---| "kin.memory.history" # HistoryParams -> HistoryResult: a memory's kept versions, newest first
---| "kin.memory.version" # VersionParams -> VersionContentResult: one kept version's content
---| "kin.memory.restore" # VersionParams -> RestoreResult: write a kept version back
---| "kin.memory.changes" # ChangesParams -> ChangesResult: what changed since it was last reviewed
---| "kin.memory.acceptChanges" # PathsParams -> PathsResult: mark changes reviewed
---| "kin.memory.revertChanges" # PathsParams -> PathsResult: bring memories back to their reviewed content
---| "kin.memory.fixAll" # EmptyParams -> ProposalResult: the store's safe fixes, as one proposal
---| "kin.memory.restamp" # RestampParams -> ProposalResult: a new stamp for every memory of a moved repository
---| "kin.memory.stats" # WorkspaceParams -> StatsResult: the store's health at a glance
---| "kin.memory.setMemoryEnabled" # SetMemoryEnabledParams -> SetMemoryEnabledResult: turn memory on or off in the global settings file
---| "kin.memory.sync" # SyncParams -> SyncResult: commit, fetch, merge and push the store through git
---| "kin.memory.resolveConflict" # ResolveConflictParams -> OkResult: keep one side of a sync conflict
---| "kin.memory.conflictVersions" # ConflictParams -> ConflictVersionsResult: both sides of a sync conflict

return {}
