"""Recall commands: `kin.memory.search`, `kin.memory.indexPreview`, `kin.memory.reindex`.

Search and the preview are recall: with `memory_enabled = false` in a settings file they fail with the
memory tool's sentence naming that file. Reindex only maintains the local cache and stays available.
"""

from __future__ import annotations

import asyncio

from pygls.lsp.server import LanguageServer

from ... import protocol
from ...recall.results import index_preview_result, search_answer, search_hits
from ...store.home import home_relative
from ...store.prompt_block import compose
from ...tool import messages
from ...wording import counted
from ..progress import Progress
from ..recall_sync import RecallSync
from ..scheduler import Scheduler
from ..session import Session
from .base import CommandFailed, Handler, workspace_arg

CURRENT_WAIT = 3.0  # seconds a search waits for the index to be current before answering
READY_WAIT = 120.0  # seconds a preview waits for the startup load


class RecallCommands:
    def __init__(
        self, session: Session, recall: RecallSync, scheduler: Scheduler, progress: Progress
    ) -> None:
        self.session = session
        self.recall = recall
        self.scheduler = scheduler
        self.progress = progress

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {
            "kin.memory.search": self.search,
            "kin.memory.indexPreview": self.index_preview,
            "kin.memory.reindex": self.reindex,
        }

    def _active(self, workspace: str | None) -> tuple[str, ...]:
        return self.session.active() if workspace is None else workspace_arg(workspace)

    async def _require_enabled(self, loop: asyncio.AbstractEventLoop) -> None:
        """Recall answers nothing while `memory_enabled = false`: the tool's sentence, naming the file
        that says so (the settings files are read off the loop)."""
        await self.scheduler.run(self._check_enabled)

    def _check_enabled(self) -> None:
        settings = self.session.file_settings()
        if not settings.memory_enabled:
            raise CommandFailed(messages.disabled(home_relative(settings.disabled_by)))

    async def search(self, params: protocol.SearchParams) -> protocol.SearchResult:
        active = self._active(params.workspace)
        loop = asyncio.get_running_loop()
        ctx = self.session.context()
        # A wrong "no match" is worse than a slow answer: wait (bounded) for the index to catch up. Once
        # it is current (nearly always) the whole answer is one task on the query pool.
        current = self.recall.wait_current(0)
        if not current:
            await self._require_enabled(loop)
            current = await self.scheduler.run(self.recall.wait_current, CURRENT_WAIT)

        def hits(view: tuple[str, ...]) -> list:
            self._check_enabled()
            return search_hits(self.recall.recall, params, view, ctx, self.recall.querying)

        # The active view and the operator's (for "n more in other workspaces") side by side: most of
        # each is SQLite's, which runs while the other holds the interpreter.
        views = [active, ()] if active else [active]
        found = await asyncio.gather(*(self.scheduler.query(hits, view) for view in views))
        complete = current and self.recall.unavailable() is None  # an unusable index: not a "no match"
        note = self.recall.recall.semantic_note()
        return search_answer(found[0], found[-1], self.session.uri_of, complete, note)

    async def index_preview(self, params: protocol.WorkspaceParams) -> protocol.IndexPreviewResult:
        active = self._active(params.workspace)
        loop = asyncio.get_running_loop()
        await self._require_enabled(loop)
        # Before the startup load completes the store holds only open buffers: compose from all of it.
        await self.scheduler.run(self.session.ready.wait, READY_WAIT)
        store = self.session.store
        block = await self.scheduler.run(lambda: compose(list(store.memories()), store.index_file(), active))
        return index_preview_result(block)

    async def reindex(self, _params: protocol.EmptyParams) -> protocol.ReindexResult:
        task = await self.progress.begin("reindex", "Reindexing memories", cancellable=True)

        def report(done: int, total: int) -> None:
            task.report(f"{done} of {total}", int(100 * done / max(total, 1)))

        stats = await self.recall.writer.run(lambda: self.recall.reindex(report, task.cancelled))
        cancelled = task.cancelled()
        task.end("cancelled" if cancelled else f"{counted(stats.read, 'memory', 'memories')} indexed")
        return protocol.ReindexResult(files=stats.read, seconds=round(stats.seconds, 3), cancelled=cancelled)
