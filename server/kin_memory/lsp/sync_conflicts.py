"""KM800 under the diagnostics' "sync" source: the memories a sync left in conflict.

The conflicts on record live in the store's synced `.kin-sync/conflicts/` folder (gitsync/records.py),
which the watcher does not report (dot-names are no memories). A sync or a resolution changes memories,
so the records are read again once the store has been quiet for QUIET seconds after any change, once
the start-up load is complete, and right after the sync commands. Reading them is a listing of one
small folder, off the event loop.
"""

from __future__ import annotations

import logging
from typing import Any

from ..findings.model import Finding
from ..store.events import StoreEvent
from ..store.paths import in_sync_folder
from .features.diagnostics import Diagnostics
from .quiet import WhenQuiet
from .scheduler import Scheduler
from .session import Session

log = logging.getLogger("kin_memory.lsp")
QUIET = 0.3  # seconds after the last store change before the records are read again
SOURCE = "sync"


class ConflictDiagnostics:
    def __init__(self, session: Session, scheduler: Scheduler, diagnostics: Diagnostics) -> None:
        self.session = session
        self.scheduler = scheduler
        self.diagnostics = diagnostics
        self.shown: set[str] = set()  # memories with a KM800 published
        self.quiet = WhenQuiet(scheduler, "conflicts", self.refresh)
        session.events.subscribe(self._on_event)

    def register(self, server: Any) -> None:
        self.scheduler.spawn("conflicts-start", self._first)

    def _first(self) -> None:
        self.session.ready.wait()
        self.quiet.poke(0)

    def refresh_soon(self) -> None:
        self.quiet.poke(0)

    def _on_event(self, event: StoreEvent) -> None:
        if not event.buffer and self.session.ready.is_set():  # typing in a buffer settles no conflict
            self.quiet.poke(QUIET)

    def refresh(self) -> None:
        """Read the records and hand the findings to the diagnostics unit on its loop."""
        if not self.shown and not in_sync_folder(self.session.root, "conflicts"):
            return  # not synced, or nothing in conflict: nothing to read, nothing to clear
        from ..gitsync.diagnostics import conflict_findings

        store = self.session.store

        def lines_of(vpath: str) -> tuple[str, ...] | list[str] | None:
            memory = store.get(vpath)
            return memory.lines if memory is not None and not memory.is_index else None

        try:
            found = conflict_findings(self.session.root, lines_of)
        except OSError as exc:
            log.warning("sync conflicts not read: %s", exc)
            return
        loop = self.diagnostics.loop
        if loop is not None:
            loop.call_soon_threadsafe(self._publish, found)

    def _publish(self, found: dict[str, list[Finding]]) -> None:
        for vpath in self.shown - set(found):
            self.diagnostics.publish_extra(SOURCE, vpath, [])
        for vpath, findings in found.items():
            self.diagnostics.publish_extra(SOURCE, vpath, findings)
        self.shown = set(found)
