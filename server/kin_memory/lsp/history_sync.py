"""History in the language server: once the store is loaded, catch up with the disk (the first time, the
whole store is kept and marked reviewed), then keep what every disk change holds as it is observed.

Store events for the disk (the watcher's, the client's, our own commands') are queued to one lane
(a thread of the scheduler's), never read on the event loop. A change whose content is already the memory's newest version (a
write the tool, a proposal or a restore kept itself) adds nothing. A buffer's text is not a write: only what
reaches the disk is kept, whether the memory is open or not. A disk change the editor announced with
didSave is the person's own save: its version says "edit" (when the watcher was quicker and kept it as
"external" moments ago, the save relabels that version).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from ..history import retention
from ..history.db import HistoryUnavailable, Retention, database
from ..history.sync import catch_up
from ..history.versions import keep, observe
from ..store.events import StoreEvent
from .scheduler import Scheduler
from .session import Session

log = logging.getLogger("kin_memory.lsp")
READY_WAIT = 600.0


class HistorySync:
    def __init__(
        self, session: Session, scheduler: Scheduler, pause: Callable[[], None] | None = None
    ) -> None:
        self.session = session
        self.pause = pause  # between batches of the catch-up: let waiting queries go first
        self.worker = scheduler.lane("history")
        self.pending: set[str] = set()
        self.saved: set[str] = set()  # memories the editor saved since the last drain
        self.lock = threading.Lock()
        self.started = False
        self.synced = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self._limits: tuple[Path, Retention] | None = None
        session.events.subscribe(self._on_event)

    def register(self, _server: object) -> None:
        """Starts the catch-up; it waits for the startup load on the worker, not on the event loop."""
        self.worker.submit(self._start)

    def _start(self) -> None:
        self.session.ready.wait(READY_WAIT)
        try:
            self._write_limits()
            stats = catch_up(self.session.root, self.pause)
            log.info("history: %d changed memories read, %d versions kept%s", stats.read, stats.kept,
                     " (first start: the store is marked reviewed)" if stats.first else "")  # fmt: skip
        except HistoryUnavailable as exc:
            log.warning("memory history off: %s", exc.reason)
        except Exception as exc:  # noqa: BLE001 - history is an aid: the server keeps serving without it
            log.warning("history catch-up failed: %r", exc)
        finally:
            self.synced.set()
        self._drain()

    def _on_event(self, event: StoreEvent) -> None:
        if event.buffer:  # typing in an open memory: nothing is written until it is saved
            return
        if event.kind == "reset":  # the store was reloaded (moved root, a folder came or went)
            self.synced.clear()  # commands wait for this catch-up (a new root's first one marks it reviewed)
            self.idle.clear()
            self.worker.submit(self._start)
            return
        if event.vpath is None:
            return
        with self.lock:
            self.pending.add(event.vpath)
            if event.saved:
                self.saved.add(event.vpath)
            self.idle.clear()
        if self.synced.is_set():
            self.worker.submit(self._drain)

    def _drain(self) -> None:
        with self.lock:
            batch, self.pending = sorted(self.pending), set()
            saved, self.saved = self.saved, set()
        try:
            if batch:
                self._write_limits()
                root = self.session.root
                observed = observe(root, batch)
                edits = [o for o in observed if o.vpath in saved and o.data is not None]
                keep(root, edits, "edit", written=frozenset(o.vpath for o in edits))
                keep(root, [o for o in observed if o not in edits], "external")
        except Exception as exc:  # noqa: BLE001
            log.warning("history capture failed: %r", exc)
        finally:
            with self.lock:
                if not self.pending:
                    self.idle.set()

    def _write_limits(self) -> None:
        """The editor's retention settings go into the store's version database (the CLI prunes by them)."""
        h = self.session.settings.history
        wanted = Retention(h.keep_versions, h.keep_days, int(h.max_megabytes * 1024 * 1024))
        root = self.session.root
        if self._limits == (root, wanted):
            return
        with database(root).transaction() as conn:
            retention.set_limits(conn, wanted)
            retention.prune_total(conn)
        self._limits = (root, wanted)

    def wait_current(self, timeout: float) -> bool:
        """Whether the catch-up and every queued capture are done within `timeout` (off the event loop)."""
        return self.synced.wait(timeout) and self.idle.wait(timeout)
