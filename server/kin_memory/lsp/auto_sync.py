"""Automatic sync (the `sync` settings, off by default): every `intervalMinutes`, and/or a minute after
the store's last change with `afterWrites`. Only a store that is already synced (a git repository with a
remote, set once by the person) is ever synced automatically: nothing here makes a repository or picks
a remote. A sync that fails is logged and tried again at the next turn; one that leaves conflicts says
so in a message (KM800 marks the files).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..store.events import StoreEvent
from .scheduler import Scheduler
from .session import Session

log = logging.getLogger("kin_memory.lsp")
AFTER_WRITES_QUIET = 60.0  # seconds the store stays unchanged before a sync after writes
TICK = 5.0  # seconds between looks at the clock and the settings


class AutoSync:
    def __init__(self, session: Session, scheduler: Scheduler, say: Callable[[str, bool], None],
                 refresh: Callable[[], None]) -> None:  # fmt: skip
        self.session = session
        self.scheduler = scheduler
        self.say = say  # (message, warning): a message shown in the editor
        self.refresh = refresh  # the conflicts' diagnostics read again
        self.last_change: float | None = None
        self.last_sync = time.monotonic()
        self.wake = threading.Event()
        session.events.subscribe(self._on_event)

    def register(self, server: Any) -> None:
        self.scheduler.spawn("auto-sync", self._run)

    def _on_event(self, event: StoreEvent) -> None:
        if not event.buffer:  # a write on disk (a save from the editor too), not typing
            self.last_change = time.monotonic()

    def due(self, now: float) -> bool:
        """Whether the settings ask for a sync now."""
        s = self.session.settings.sync
        if s.interval_minutes > 0 and now - self.last_sync >= s.interval_minutes * 60:
            return True
        change = self.last_change
        return (
            s.after_writes
            and change is not None
            and change > self.last_sync
            and now - change >= AFTER_WRITES_QUIET
        )

    def _run(self) -> None:
        self.session.ready.wait()
        while not self.wake.wait(TICK):
            now = time.monotonic()
            if self.due(now) and _has_remote(self.session.root):
                self.last_sync = now
                self.sync_now()

    def sync_now(self) -> None:
        from ..gitsync.door import run_sync
        from ..gitsync.git import SyncError
        from ..store.workspace import own_workspaces

        root = self.session.root
        try:
            result = run_sync(root, own_workspaces(self.session.active(), root))
        except SyncError as exc:
            log.warning("automatic sync: %s", exc.message)
            return
        log.info("automatic sync: %s", " ".join(result.summary))
        self.session.forget_active()
        self.refresh()
        if result.conflicts:
            self.say("kin-memory: automatic sync: " + " ".join(result.summary), True)


def _has_remote(root: os.PathLike[str] | str) -> bool:
    """A synced store: its own repository with a remote named origin (read from its config, no git run)."""
    try:
        with open(os.path.join(root, ".git", "config"), encoding="utf-8", errors="replace") as f:
            return '[remote "origin"]' in f.read(1 << 16)
    except OSError:
        return False
