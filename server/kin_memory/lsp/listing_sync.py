"""The store's kept listing follows the files that come and go while the server runs.

A start takes its files from the listing kept in the findings cache only while no folder changed since
it was kept (caches/listing.py). Files created or deleted while the server runs (the agent
writing memories, an external edit) change their folders: once the store has been quiet for QUIET
seconds, the store is walked again on a thread of its own and that listing kept, so that the next start
need not walk it. A walk still due when the editor shuts the server down is done before it answers
(kept when the folders changed just before are trusted within SHUTDOWN_WAIT: the editor waits no longer).
"""

from __future__ import annotations

import logging
from typing import Any

from ..store.events import StoreEvent
from .quiet import WhenQuiet
from .scheduler import Scheduler
from .session import Session

log = logging.getLogger("kin_memory.lsp")

QUIET = 3.0  # seconds without a file created or deleted before the store is walked again
SHUTDOWN_WAIT = 0.1  # seconds `shutdown` may wait for folders changed a moment before to be trusted


class ListingSync:
    def __init__(self, session: Session, scheduler: Scheduler) -> None:
        self.session = session
        self.quiet = WhenQuiet(scheduler, "listing", self._walk)
        session.events.subscribe(self._on_event)

    def register(self, server: Any) -> None:
        from lsprotocol import types as lsp

        @server.feature(lsp.SHUTDOWN)
        def shutdown(*_args: object) -> None:
            self.flush()

    def flush(self) -> None:
        """The walk still due, done now (the editor is shutting the server down)."""
        if self.quiet.take_due():
            self._walk(wait=SHUTDOWN_WAIT)

    def _on_event(self, event: StoreEvent) -> None:
        if event.overlay or event.kind not in ("created", "deleted"):
            return
        self.quiet.poke(QUIET)  # per event: cheap, the walk waits for the store to be quiet

    def _walk(self, wait: float = float("inf")) -> None:
        from ..caches.findings import FindingsCache
        from ..caches.listing import walk_and_keep

        root = self.session.root
        cache = FindingsCache.open(root)
        if cache is None:
            return
        try:
            walk_and_keep(cache.conn, root, wait)
        except Exception as exc:  # noqa: BLE001 - the next start walks the store instead
            log.info("store listing not kept: %r", exc)
        finally:
            cache.close()
