-- Generated from server/kin_memory/protocol.py by scripts/gen_protocol.py. Do not edit: change the
-- Python protocol and run `python scripts/gen_protocol.py` (the unit tests fail while this file is stale).
-- LuaLS annotations for the `kin.memory.*` commands' arguments and results; nothing at run time.

---@alias KinMemory.Category "project-fact"|"preference"|"episodic"|"session"
---@alias KinMemory.Status "ok"|"stale"|"expiring"|"expired"
---@alias KinMemory.ChangeKind "create"|"edit"|"rename"|"delete"
---@alias KinMemory.IndexStateName "building"|"ready"|"unavailable"
---@alias KinMemory.RootSource "argument"|"KIN_MEMORY_DIR"|"editor setting"|"global settings"|"default"

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

---@class KinMemory.WorkspaceParams
---@field workspace? string|nil

---@class KinMemory.ReflectParams
---@field transcript string # a path or a file URI
---@field apply? boolean

--- A sweep deletes only with the token of the dry run whose list the user confirmed; without a token,
--- or with one that is stale or unknown, it deletes nothing and answers as a dry run.
---@class KinMemory.SweepParams
---@field dryRun? boolean
---@field token? string|nil # from the dry run's answer

---@class KinMemory.MarkReviewedParams
---@field uri string

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

---@class KinMemory.ReflectChange
---@field kind KinMemory.ChangeKind
---@field path string
---@field from string|nil # a rename's old path (wire key: "from")
---@field folder boolean
---@field conflict boolean

---@class KinMemory.ReflectResult
---@field summary string
---@field changes KinMemory.ReflectChange[]
---@field applied boolean

--- A dry run's `swept` is what the sweep would delete and `token` names exactly that list (a real
--- sweep answers with no token); `changed` are listed files that changed since the dry run: kept.
---@class KinMemory.SweepResult
---@field swept string[]
---@field kept integer
---@field token string|nil
---@field changed string[]

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

---@alias KinMemory.CommandName
---| "kin.memory.tool" # ToolParams -> ToolResult: one memory-tool call
---| "kin.memory.search" # SearchParams -> SearchResult: ranked recall over the visible memories
---| "kin.memory.list" # EmptyParams -> ListResult: every memory with its lifecycle and visibility
---| "kin.memory.reflect" # ReflectParams -> ReflectResult: one bounded reflection pass
---| "kin.memory.sweep" # SweepParams -> SweepResult: delete expired episodic and session memories
---| "kin.memory.markReviewed" # MarkReviewedParams -> OkResult: touch a stale project fact
---| "kin.memory.indexPreview" # WorkspaceParams -> IndexPreviewResult: the prompt block the agent inlines
---| "kin.memory.reindex" # EmptyParams -> ReindexResult: rebuild the recall index
---| "kin.memory.info" # EmptyParams -> InfoResult: the store root, workspaces and index state

return {}
