"""The recall index kept in step with the store, from its change events.

Writes run on one writer thread (SQLite has one writer anyway); a change arriving while the writer is
busy joins the pending set and is applied in the next batch. Open buffers also get KM601 (near-duplicates)
and KM604 (possible contradictions), handed to the diagnostics unit under the "recall" source.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..findings import contradictions as km604
from ..findings import duplicates as km601
from ..findings.model import Finding
from ..store.events import StoreEvent
from ..store.paths import INDEX_VPATH
from ..store.workspace import visibility
from .heap import release_freed
from .scheduler import Scheduler
from .session import Session

if TYPE_CHECKING:  # the index (SQLite, ranking) is loaded when first used, after `initialize`
    from ..recall.service import Recall
    from .progress import Progress

log = logging.getLogger("kin_memory.lsp")
BURST_PAUSE = 0.05  # seconds the index writer waits between batches while the editor is sending
BUFFER_SETTLE = 0.15  # seconds after a buffer opened or changed before the writer indexes it
QUERY_YIELD = 0.5  # seconds at most background work waits for queries before each small step...
QUERY_GAP = 0.05  # ...until none runs and none ended this recently (hovers come one after another)
QUERY_QUIET = 0.1  # seconds without a query the writer waits for before a batch of open buffers...
QUIET_MAX = 0.6  # ...for at most this long: a stream of hovers delays KM601 a little, never for good
SEAL_EVERY = 30.0  # seconds at least between two seals of the index (a pass over its rows; see index.py)

Publish = Callable[[str, str, list[Finding]], None]  # (source, vpath, findings)
Log = Callable[[str], None]


class RecallSync:
    def __init__(self, session: Session, scheduler: Scheduler, publish: Publish, say: Log,
                 waiting: Callable[[], int] = lambda: 0, synced: threading.Event | None = None,
                 progress: Progress | None = None) -> None:  # fmt: skip
        """`synced`: set by the start-up front when the index already matched the store it loaded."""
        self.session = session
        self.publish = publish
        self.say = say
        self.waiting = waiting  # messages from the editor not yet handled
        self._queries = 0  # recall queries running now (hover, search, symbols): the writer yields to them
        self._last_query = 0.0  # when the last of them ended
        self._buffer_touched = 0.0  # when an editor buffer last changed (opened or edited)
        self.writer = scheduler.lane("index")  # SQLite has one writer anyway
        self.pending: set[str] = set()
        self.lock = threading.Lock()
        self.draining = False
        self.synced = synced or threading.Event()
        self.idle = threading.Event()  # no change is waiting to be indexed
        self.idle.set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._recall: Recall | None = None
        self._sealed_at = -SEAL_EVERY  # when the index was last sealed (monotonic)
        from .semantic_fill import SemanticFill

        self.fill = SemanticFill(self.writer, lambda: self.recall, self.yield_to_queries,
                                 lambda: bool(self.pending), say, progress)  # fmt: skip
        session.events.subscribe(self._on_event)

    @property
    def recall(self) -> Recall:
        # The store can move (memoryDir arrives with the client's settings): the index follows it.
        if self._recall is None or self._recall.root != self.session.root:
            from ..recall.service import Recall

            self._recall = Recall(
                self.session.root, semantic=self.session.semantic_wanted(), background_fill=True
            )
            self._recall.index.on_reset = self._refill
        else:  # the setting can change while the server runs: rankings follow it at once
            self._recall.semantic_on = self.session.semantic_wanted()
        return self._recall

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """After the startup load: bring the index up to date, then follow the store's events."""
        self.loop = loop
        self.fill.loop = loop
        self.writer.submit(self._follow if self.synced.is_set() else self._initial_sync)

    def _on_event(self, event: StoreEvent) -> None:
        if event.kind == "reset":
            # Before start, a store loaded anew (the start-up's) is what start() syncs with anyway.
            if self.synced.is_set() and self.loop is not None:
                self.writer.submit(self._resync)
            return
        if event.vpath is None or event.vpath == INDEX_VPATH:  # MEMORY.md is never indexed
            return
        if event.overlay:
            self._buffer_touched = time.monotonic()
        with self.lock:
            self.pending.add(event.vpath)
            self.idle.clear()
            if self.draining or not self.synced.is_set():
                return
            self.draining = True
        self.writer.submit(self._drain)

    def _refill(self) -> None:
        """The database was deleted or rebuilt while we run: refill it from the store, on the writer."""
        log.warning("recall index was reset: refilling it from the store")
        self.writer.submit(self._resync)

    def _resync(self) -> None:
        try:
            stats = self.recall.sync_memories(self.session.store.disk_memories())
            for memory in self.session.store.overlay_memories():
                self.recall.update(memory, overlay=True)
            self.say(f"recall index refilled: {stats.read} memories in {stats.seconds:.2f}s")
        except Exception as exc:  # noqa: BLE001
            log.warning("recall index refill failed: %r", exc)

    def _initial_sync(self) -> None:
        said = ""
        try:
            stats = self.recall.sync_memories(self.session.store.disk_memories())
            said = (
                f"recall index: {stats.read} of {stats.files} memories (re)indexed, {stats.removed} removed, "
                f"in {stats.seconds:.2f}s"
            )
        except Exception as exc:  # noqa: BLE001 - recall is an aid: the server keeps serving without it
            log.warning("recall index sync failed: %r", exc)
        finally:
            try:
                self.recall.warm()  # the first hover must not read the whole vocabulary
            except Exception as exc:  # noqa: BLE001
                log.warning("recall vocabulary not read: %r", exc)
            self.synced.set()
            if said:  # once queries are answered at full speed
                self.say(said)
            release_freed()  # reading every file to index it freed far more than the index keeps
        self._follow(warm=False)

    def _follow(self, warm: bool = True) -> None:
        """From the first sync on: index what changed meanwhile and the open buffers, then follow."""
        if warm:  # the front found the index current: its vocabulary is read here, not in the first hover
            try:
                self.recall.warm()
            except Exception as exc:  # noqa: BLE001
                log.warning("recall vocabulary not read: %r", exc)
        with self.lock:  # buffers opened meanwhile are indexed as they are now
            self.pending.update(m.vpath for m in self.session.store.overlay_memories())
        self._drain()

    def _drain(self) -> None:
        while True:
            if self.waiting():  # a burst of edits: gather more of it per batch, and leave the loop the CPU
                time.sleep(BURST_PAUSE)
            self._settle()
            with self.lock:
                batch, self.pending = self.pending, set()
                if not batch:
                    self.draining = False
                    self.idle.set()
            if not batch:
                try:
                    self.recall.warm()  # refresh what the writes made stale, here rather than in a query
                except Exception as exc:  # noqa: BLE001
                    log.warning("recall vocabulary not read: %r", exc)
                self._seal()
                self._fill_meaning()
                return
            for vpath in sorted(batch):
                self.yield_to_queries()
                try:
                    self._apply(vpath)
                except Exception as exc:  # noqa: BLE001
                    log.warning("recall index update of %s failed: %r", vpath, exc)

    def _fill_meaning(self) -> None:
        """Once the lexical index is current: the semantic layer's missing vectors (semantic_fill.py)."""
        try:
            self.fill.kick()
        except Exception as exc:  # noqa: BLE001 - words still answer
            log.warning("semantic layer not filled: %r", exc)

    def _seal(self) -> None:
        """Once idle, now and then: the index's seals made again for the segments that were written,
        so that the next start finds them unchanged without a look at their rows."""
        if time.monotonic() - self._sealed_at < SEAL_EVERY:
            return
        self.yield_to_queries()
        self._sealed_at = time.monotonic()
        try:
            self.recall.index.seal()
        except Exception as exc:  # noqa: BLE001 - the next start compares row by row instead
            log.info("recall index not sealed: %r", exc)

    def _apply(self, vpath: str) -> None:
        store = self.session.store
        memory = store.get(vpath)
        if memory is None:
            self.recall.remove(vpath)
            return
        if memory.is_index:
            return
        overlay = store.is_open(vpath)
        self.recall.update(memory, overlay=overlay)
        if overlay and self.loop is not None:  # KM601 and KM604 for the buffers being edited
            active = self.session.active()
            found = km601.check(memory, self.recall.duplicates_of(memory, active))
            if visibility(memory.stamp, active).visible:  # another workspace's memory: judged in its own
                found += km604.check(memory, self.recall.neighbour_bodies(memory, active))
            self.loop.call_soon_threadsafe(self.publish, "recall", vpath, found)

    @contextmanager
    def querying(self) -> Iterator[None]:
        """Around a query someone waits for (hover, search, symbols): the index writer does not start
        on a file meanwhile, as its Python work would share the interpreter with the query."""
        with self.lock:
            self._queries += 1
        try:
            yield
        finally:
            with self.lock:
                self._queries -= 1
                self._last_query = time.monotonic()

    def _settle(self) -> None:
        """Before a batch: let a buffer that was just opened or edited settle (a hover usually follows an
        open at once, and typing goes on), for a bounded time; and when buffers were touched, let a
        run of queries (hovering one paragraph after another) pause first: each buffer costs the writer
        two recall queries of its own (KM601, KM604), which would share the CPU with the user's."""
        wait = self._buffer_touched + BUFFER_SETTLE - time.monotonic()
        if wait > 0:
            time.sleep(min(wait, BUFFER_SETTLE))
        if time.monotonic() - self._buffer_touched > QUIET_MAX:
            return
        deadline = time.monotonic() + QUIET_MAX
        while time.monotonic() < deadline:
            quiet = time.monotonic() - self._last_query
            if not self._queries and quiet >= QUERY_QUIET:
                return
            time.sleep(max(0.005, QUERY_QUIET - quiet) if not self._queries else 0.005)

    def yield_to_queries(self) -> None:
        """Before each file (and each small batch of other background work): let running queries
        finish, and a run of them (one hover after another) or of keystrokes pause, for a bounded time.
        Background work shares the interpreter with the editor's requests: a few milliseconds of it
        during a hover or a keystroke's diagnostics double them."""
        deadline = time.monotonic() + QUERY_YIELD
        while True:
            now = time.monotonic()
            if now >= deadline or (
                not self._queries
                and now - self._last_query >= QUERY_GAP
                and now - self._buffer_touched >= QUERY_GAP
            ):
                return
            time.sleep(0.002)

    def wait_current(self, timeout: float) -> bool:
        """Wait until the index is current: the first sync (or the front's finding that it matched) and
        every pending change indexed; whether it was within `timeout` (a thread blocks here, never the
        event loop)."""
        deadline = time.monotonic() + timeout
        # Not the store's adoption: `synced` is set after it (the first sync), or before it by the start-up
        # front, when the index matched every file the workers listed; a change meanwhile clears `idle`.
        for event in (self.synced, self.idle):
            if not event.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True

    def unavailable(self) -> str | None:
        """Why the index cannot answer for the whole store (its hidden folder a link, the database not
        opened, read or written): a search answered meanwhile is incomplete, never a sure "no match"."""
        return self.recall.unavailable()

    def reindex(self, progress, cancelled):
        """A full rebuild (on the writer thread: the caller runs this through `self.writer.run`)."""
        return self.recall.reindex(self.session.store.disk_memories(), progress=progress, cancelled=cancelled,
                                   chunk=1000)  # fmt: skip
