"""Health commands: `kin.memory.stats` (the store at a glance) and `kin.memory.setMemoryEnabled` (the
memory switch, written into the global settings file).

Stats answer while memory is disabled: the health view is where the user turns it back on. Everything
reads the disk or the index, so it runs off the event loop.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from pygls.lsp.server import LanguageServer

from ... import protocol
from ...history.query import HistoryError
from ...history.review import queue_size
from ...stats import GroupsMemo, store_stats
from ...store.settings_edit import SettingsEditError, set_memory_enabled
from ..history_sync import HistorySync
from ..recall_sync import RecallSync
from ..scheduler import Scheduler
from ..session import Session
from .base import CommandFailed, Handler, workspace_arg

log = logging.getLogger("kin_memory.lsp")
READY_WAIT = 120.0  # seconds stats wait for the startup load (counts over a partial store would lie)
HISTORY_WAIT = 10.0  # seconds the queue count waits for captures the watcher has just seen


class HealthCommands:
    def __init__(
        self, session: Session, recall: RecallSync, scheduler: Scheduler, history: HistorySync
    ) -> None:
        self.session = session
        self.recall = recall
        self.scheduler = scheduler
        self.history = history
        self.memo = GroupsMemo()

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {"kin.memory.stats": self.stats, "kin.memory.setMemoryEnabled": self.set_memory_enabled}

    def _review_queue(self) -> int:
        self.history.wait_current(HISTORY_WAIT)
        try:
            return queue_size(self.session.root)
        except HistoryError as exc:  # the view still answers; the log says why the count is missing
            log.warning("review queue not counted: %s", exc)
            return 0

    async def stats(self, params: protocol.WorkspaceParams) -> protocol.StatsResult:
        await self.scheduler.run(self.session.ready.wait, READY_WAIT)
        ctx = self.session.context()
        if params.workspace is not None:
            ctx = replace(ctx, active=workspace_arg(params.workspace))
        settings = await self.scheduler.run(self.session.file_settings)
        count = await self.scheduler.query(self.recall.recall.index.count)
        index = protocol.IndexState(
            state="ready" if self.recall.synced.is_set() else "building", memories=count
        )
        queue = await self.scheduler.run(self._review_queue)
        return await self.scheduler.run(lambda: store_stats(
                self.session.store, ctx, root=self.session.root_choice, memory_enabled=settings.memory_enabled,
                index=index, review_queue=queue, uri_of=self.session.uri_of, memo=self.memo,
            ),
        )  # fmt: skip

    async def set_memory_enabled(
        self, params: protocol.SetMemoryEnabledParams
    ) -> protocol.SetMemoryEnabledResult:
        try:
            path = await self.scheduler.run(set_memory_enabled, params.enabled)
        except SettingsEditError as exc:
            raise CommandFailed(str(exc)) from None
        return protocol.SetMemoryEnabledResult(enabled=params.enabled, settings_file=str(path))
