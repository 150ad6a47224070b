"""Store commands: `kin.memory.list`, `kin.memory.markReviewed`, `kin.memory.info`.

Mark reviewed applies to project facts only: on any other category it is refused with a sentence and
the file is left as it was (see tool/review.py).
"""

from __future__ import annotations

from pygls.lsp.server import LanguageServer

from ... import protocol
from ...recall.index import IndexUnavailable
from ...store.info import store_info
from ...store.lifecycle import lifecycle
from ...store.workspace import visibility
from ...tool.review import ReviewError, mark_reviewed
from ..recall_sync import RecallSync
from ..scheduler import Scheduler
from ..session import Session, uri_to_path
from .base import CommandFailed, Handler

READY_WAIT = 120.0  # seconds a listing waits for the startup load


class StoreCommands:
    def __init__(self, session: Session, recall: RecallSync, scheduler: Scheduler) -> None:
        self.session = session
        self.recall = recall
        self.scheduler = scheduler

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {
            "kin.memory.list": self.list,
            "kin.memory.markReviewed": self.mark_reviewed,
            "kin.memory.info": self.info,
        }

    async def list(self, _params: protocol.EmptyParams) -> protocol.ListResult:
        # Before the startup load completes the store is partial: answer with the whole of it.
        await self.scheduler.run(self.session.ready.wait, READY_WAIT)
        ctx = self.session.context()
        out = []
        for m in sorted(self.session.store.memories(), key=lambda m: m.vpath):
            life = lifecycle(m.category, m.mtime, ctx.now, ctx.thresholds)
            out.append(protocol.MemoryEntry(
                path=m.vpath, uri=self.session.uri_of(m.vpath), category=m.category,
                workspace=m.stamp if isinstance(m.stamp, str) else None,
                visible=visibility(m.stamp, ctx.active).visible, age_days=round(life.age_days, 2),
                status=life.status,  # type: ignore[arg-type]  # lifecycle statuses are the protocol's
            ))  # fmt: skip
        return protocol.ListResult(memories=out)

    async def mark_reviewed(self, params: protocol.MarkReviewedParams) -> protocol.OkResult:
        vpath = self.session.vpath_of(params.uri)
        path = uri_to_path(params.uri)
        if not vpath or path is None:
            raise CommandFailed("This file is not a memory of the store.")
        root = self.session.root
        try:
            # Through the tool's guard (never a file outside the store), off the event loop: it reads the
            # file to refuse anything but a project fact.
            await self.scheduler.run(mark_reviewed, root, vpath)
        except ReviewError as exc:
            raise CommandFailed(str(exc)) from None
        store = self.session.store
        if store.is_open(vpath):  # an open buffer: its lifecycle follows the file's new mtime
            memory = store.get(vpath)
            try:
                store.set_overlay(path, memory.text if memory else "", path.stat().st_mtime)
            except OSError:
                pass
        store.refresh_path(path)
        return protocol.OkResult()

    async def info(self, _params: protocol.EmptyParams) -> protocol.InfoResult:
        settings = await self.scheduler.run(self.session.file_settings)
        try:
            count = await self.scheduler.query(self.recall.recall.index.count)
            name: protocol.IndexStateName = "ready" if self.recall.synced.is_set() else "building"
        except IndexUnavailable:  # locked by another process for now: the rest of the answer stands
            count, name = 0, "unavailable"
        state = protocol.IndexState(state=name, memories=count)
        return store_info(self.session.root_choice, self.session.active(), settings, state)
