"""What an agent gets from the store, whatever door it comes through (MCP, the SDK backend): the memory
tool's commands through the same guard, write-time rules, atomic writes, history and audit, labelled
"agent" (the editor's review queue shows who wrote what); ranked recall; the prompt block.

Everything here is plain core: no MCP, no SDK. Results are text for a model: every name, title and
snippet goes through the prompt sink (one entry is one line, no control or invisible characters) and
secrets are masked (recall masks titles and snippets; the prompt block is masked like index-preview's).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..bounds import OutOfRange, whole
from ..sinks import prompt
from ..sinks.controls import escape_controls_in_block
from ..store.home import home_relative
from ..store.settings import EffectiveSettings, effective_settings
from ..store.workspace import with_equivalents
from ..tool import messages
from ..tool.commands import ToolContext, ToolResult, run_tool
from ..tool.commands.base import MODES, MUTATIONS

if TYPE_CHECKING:
    from ..recall.service import Recall
    from ..store.disk_changes import SharedWatch
    from .listed import Listed
    from .rename_reads import RenameReads

SOURCE = "agent"  # the history and audit label of every write an agent makes
RESYNC_SECONDS = 2.0  # how old the recall index may be for writes made by others (the editor, the CLI)
MAX_SEARCH_RESULTS = 100  # what memory_search's schema declares (mcp/schema.py)
DEFAULT_SEARCH_RESULTS = 5


@dataclass(frozen=True)
class Answer:
    """A tool's text for the model and whether it is an error."""

    text: str
    is_error: bool = False


def settings_for(workspace: str | None) -> EffectiveSettings:
    """The global settings file, then the workspace's project file (`global` has none)."""
    return effective_settings([workspace] if workspace and os.path.isabs(workspace) else [])


def _disabled(settings: EffectiveSettings) -> Answer | None:
    if settings.memory_enabled:
        return None
    return Answer(messages.disabled(home_relative(settings.disabled_by)), True)


def needs_consent(mode: str, input: object) -> bool:  # noqa: A002 - the tool's own name
    """Whether this call, in this mode, asks the person first (strict mode, a mutation)."""
    return mode == "strict" and isinstance(input, dict) and input.get("command") in MUTATIONS


def consent_question(input: dict[str, object]) -> str:  # noqa: A002
    """The question strict mode asks, in the tool's own words (as the editor's prompt asks it)."""
    command, path = input.get("command"), input.get("path")
    if command == "insert":
        what = f"insert into {path} at line {input.get('insert_line')}"
    elif command == "str_replace":
        what = f"str_replace in {path}"
    elif command == "rename":
        what = f"rename {input.get('old_path')} to {input.get('new_path')}"
    else:
        what = f"{command} {path}"
    return f"An agent wants to {prompt.field(what)} in your memory store. Allow?"


@dataclass
class AgentStore:
    """One store as an agent sees it. `mode`: auto | strict | plan (the editor's toolMode)."""

    root: Path
    mode: str = "auto"
    # Whether this process watches the store, so a rename reads only the memories that may name the old
    # path (mcp/rename_reads.py) and the prompt block only what changed (mcp/listed.py): the MCP server
    # does; the SDK class, living in the agent's own process, starts no thread there and stats every file.
    watch: bool = False
    _watch: SharedWatch | None = field(default=None, repr=False, compare=False)
    _recall: Recall | None = field(default=None, repr=False, compare=False)
    _renames: RenameReads | None = field(default=None, repr=False, compare=False)
    _synced_at: float | None = field(default=None, repr=False, compare=False)
    _listed: Listed | None = field(default=None, repr=False, compare=False)

    def recall(self) -> Recall:
        """The recall index, opened once per process. Brought up to date with the disk (a stat per memory,
        only new and changed files read: ~0.2 s at 10k memories) when it is older than RESYNC_SECONDS;
        this process's own writes are in it at once (see _indexed)."""
        recall = self._open_recall()
        now = time.monotonic()
        if self._synced_at is None or now - self._synced_at > RESYNC_SECONDS:
            if self._renames is not None:  # the moment the index is up to date from, for the next rename
                with self._renames.lock:
                    self._renames.synced_now()
            else:
                self._sync_index()  # an index that cannot be written: the answer says it is incomplete
            self._synced_at = now
        return recall

    def _open_recall(self) -> Recall:
        if self._recall is None:
            from ..recall.service import Recall

            self._recall = Recall(self.root, semantic=settings_for(None).recall_semantic)
        return self._recall

    def _sync_index(self) -> bool:
        from ..recall.service import sync_quietly

        assert self._recall is not None
        return sync_quietly(self._recall)

    def _rename_reads(self, old: str) -> list[tuple[str, str, bool]] | None:
        """The memories a rename of `old` must read, when the watch can tell (None: every file)."""
        if not self.watch:
            return None
        if self._renames is None:
            from .rename_reads import RenameReads

            self._open_recall()  # brought up to date by the first ask, from the watch's first moment
            self._renames = RenameReads(self.root, self._shared_watch(), self._sync_index)
        return self._renames.files(old)

    def _shared_watch(self) -> SharedWatch:
        if self._watch is None:
            from ..store.disk_changes import SharedWatch

            self._watch = SharedWatch(self.root)
        return self._watch

    def close(self) -> None:
        """Stop the watch, if there is one (the process is ending)."""
        if self._watch is not None:
            self._watch.stop()

    def _indexed(self, input: dict[str, object]) -> None:  # noqa: A002
        """After a write of this process: the written file re-indexed at once; a delete or a rename
        (folders, relinked references in other memories) makes the next search look at the whole store."""
        if self._recall is None:
            return
        path = input.get("path")
        if input.get("command") not in ("create", "str_replace", "insert") or not isinstance(path, str):
            self._synced_at = None
            return
        from ..store.memory import load
        from ..store.paths import real_path

        file = real_path(Path(os.path.realpath(self.root)), path)
        if file.is_file():
            self._recall.update(load(file, path))
        else:
            self._synced_at = None

    def tool(
        self,
        input: object,  # noqa: A002
        workspace: str | None,
        confirm: Callable[[str], bool] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> ToolResult:
        """One memory-tool call exactly as a model emits it; never raises. `cancelled`: whether the client
        cancelled the call (a write not begun yet is then not made)."""
        settings = settings_for(workspace)
        ctx = ToolContext(
            root=self.root,
            workspace=workspace,
            mode=self.mode if self.mode in MODES else "auto",
            enabled=settings.memory_enabled,
            disabled_by=home_relative(settings.disabled_by),
            confirm=confirm,
            source=SOURCE,
            cancelled=cancelled,
            rename_reads=self._rename_reads,
        )
        result = run_tool(input, ctx)
        if not result.is_error and isinstance(input, dict) and input.get("command") in MUTATIONS:
            self._indexed(input)
        return result

    def refusal(self, workspace: str | None) -> Answer | None:
        """The tool's refusal while memory is disabled for this workspace (memory_enabled = false)."""
        return _disabled(settings_for(workspace))

    def search(self, query: object, limit: object, workspace: str | None) -> Answer:
        """The search command's ranked recall, as lines a model reads: path, category, title, snippet."""
        if not isinstance(query, str) or not query.strip():
            return Answer("memory_search needs a non-empty query string", True)
        try:
            count = whole(DEFAULT_SEARCH_RESULTS if limit is None else limit, "limit", 1, MAX_SEARCH_RESULTS)
        except OutOfRange as exc:
            return Answer(f"memory_search: {exc.message}", True)
        refused = _disabled(settings_for(workspace))
        if refused:
            return refused
        if not os.path.isdir(self.root):  # no store yet: nothing to find, as `view` lists it empty
            return Answer("No matching memories.")
        recall = self.recall()
        active = with_equivalents((workspace,), self.root)
        hits = recall.search(query, active, count)
        problem = recall.unavailable()
        if problem is not None and not hits:  # not "no match": the index could not be asked
            from ..recall.service import incomplete

            return Answer(f"memory_search: {incomplete(problem)}.", True)
        if not hits:
            return Answer("No matching memories.")
        lines: list[str] = []
        for h, snip in hits:
            lines.append(f"{prompt.field(h.vpath)} [{prompt.field(h.category)}] {prompt.field(h.title)}")
            if snip:
                lines.append(f"    {prompt.field(snip)}")
        if problem is not None:
            from ..recall.service import incomplete

            lines.append(f"(incomplete: {prompt.field(incomplete(problem))})")
        return Answer("\n".join(lines))

    def prompt_block(self, workspace: str | None) -> Answer:
        """The block composed for other agents (store/agent_block.py): MEMORY.md first, then the listing
        this workspace's memories first, and a last line saying what the cap left out; secrets masked,
        hostile characters escaped."""
        refused = _disabled(settings_for(workspace))
        if refused:
            return refused
        from ..findings.content import mask_secrets
        from ..store.agent_block import compose_for_agents
        from .listed import Listed

        if self._listed is None:
            self._listed = Listed(self.root, self._shared_watch() if self.watch else None)
        memories, index = self._listed.now()  # only the files changed since the last read are read
        active = with_equivalents((workspace,), self.root)
        block = compose_for_agents(memories, index, active)
        return Answer(escape_controls_in_block(mask_secrets(block.text)))
