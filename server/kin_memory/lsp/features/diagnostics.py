"""Diagnostics: every memory's findings, MEMORY.md's budget, and the settings files, through the publisher.

Subscribes to store events: a changed memory is rechecked on the event loop (proportional to that file
only); MEMORY.md, which depends on the whole listing, is rechecked only when a listing entry changed,
debounced and off the loop. The settings files (global and each workspace's project file) are watched by
a cheap stat poll, since they live outside the store and Neovim offers no client-side file watching.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from ...findings.model import Finding
from ...findings.run import check_memory, check_store
from ...findings.store_level import settings_findings
from ...store.events import StoreEvent
from ...store.memory import Memory
from ...store.paths import INDEX_VPATH
from ...store.prompt_block import compose, listing_line
from ...store.settings import global_settings_path, project_settings_path
from ..convert import diagnostics_frame, diagnostics_json
from ..publisher import DiagnosticsPublisher
from ..scheduler import Scheduler
from ..session import Session, path_to_uri, uri_to_path

log = logging.getLogger("kin_memory.lsp")
INDEX_DEBOUNCE = 0.15  # seconds
BURST_STEP = 0.02  # seconds between looks at a burst of edits
BURST_MAX_DELAY = 0.1  # seconds an edited buffer's diagnostics may lag while messages keep arriving
BURST_SLICE = 4  # deferred buffers rechecked per turn of the event loop
BURST_WINDOW = 0.05  # seconds: edits to BURST_FILES or more buffers within it are a burst...
BURST_FILES = 4  # ...(one buffer typed into, however fast, is checked at every keystroke)
SETTINGS_POLL = 0.5  # seconds between stats of the settings files


class Diagnostics:
    def __init__(self, session: Session, scheduler: Scheduler, publisher: DiagnosticsPublisher, versions,
                 waiting: Callable[[], int] = lambda: 0) -> None:  # fmt: skip
        self.session = session
        self.scheduler = scheduler
        self.publisher = publisher
        self.versions = versions  # uri → the open document's version, or None
        self.waiting = waiting  # messages from the editor not yet handled
        self._deferred: dict[str, float] = {}  # edited buffers to recheck → when first deferred
        self._edited: dict[str, float] = {}  # buffer → when last edited (see BURST_WINDOW)
        self._burst_timer: asyncio.TimerHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._listing: dict[str, object] = {}  # vpath → its listing entry as MEMORY.md's check last saw it
        # The files on disk when the whole store was last checked (MEMORY.md with them): a file first
        # seen later is compared with its entry there, so opening one does not check MEMORY.md again
        # (a pass over every memory: a tenth of a second at 100k).
        self._baseline: dict[str, Memory] = {}
        self._extra: dict[tuple[str, str], list[Finding]] = {}
        self._index_timer: asyncio.TimerHandle | None = None
        self._settings_seen: dict[Path, tuple[float, int] | None] = {}
        self._stop = threading.Event()
        session.events.subscribe(self._on_event)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.scheduler.spawn("settings", self._poll_settings)

    def stop(self) -> None:
        self._stop.set()

    # -- store events -----------------------------------------------------------------------------
    def _on_event(self, event: StoreEvent) -> None:
        loop = self.loop
        if loop is None or not self.session.ready.is_set():
            return  # the startup load publishes the whole store itself
        if _on_loop_thread(loop):
            self._handle(event)
        else:
            loop.call_soon_threadsafe(self._handle, event)

    def _handle(self, event: StoreEvent) -> None:
        if event.kind == "reset":
            self.republish_all()
        elif event.vpath is not None:
            edit = event.overlay and event.kind == "changed"
            if edit and (self.waiting() or event.vpath in self._deferred or self._bursting(event.vpath)):
                self._defer(event.vpath)
            else:
                self.recheck(event.vpath)

    # -- bursts of edits --------------------------------------------------------------------------
    # A keystroke is checked at once. While more messages wait behind it, or while edits land in many
    # buffers at once (a replace across files, a tool rewriting them), an edited buffer's check is
    # deferred and done once for all its edits, when the burst pauses or BURST_MAX_DELAY after its first
    # deferred edit: the event loop does a fraction of the work, and a hover in between waits for less.
    def _bursting(self, vpath: str | None = None) -> bool:
        """Whether BURST_FILES or more buffers were edited within the last BURST_WINDOW (noting `vpath`'s
        edit now)."""
        assert self.loop is not None
        now = self.loop.time()
        edited = self._edited
        if vpath is not None:
            edited[vpath] = now
        recent = sum(1 for t in edited.values() if now - t <= BURST_WINDOW)
        if len(edited) > 4 * BURST_FILES and recent < len(edited):  # forget the quiet ones
            self._edited = {v: t for v, t in edited.items() if now - t <= BURST_WINDOW}
        return recent >= BURST_FILES

    def _defer(self, vpath: str) -> None:
        loop = self.loop
        assert loop is not None
        self._deferred.setdefault(vpath, loop.time())
        if self._burst_timer is None:
            self._burst_timer = loop.call_later(BURST_STEP, self._flush_deferred)

    def _flush_deferred(self) -> None:
        loop = self.loop
        assert loop is not None
        self._burst_timer = None
        now = loop.time()
        busy = self.waiting() > 0 or self._bursting()
        due = [v for v, since in self._deferred.items() if not busy or now - since >= BURST_MAX_DELAY]
        for vpath in due[:BURST_SLICE]:  # a few at a time: a request waits for one slice at most
            del self._deferred[vpath]
            self.recheck(vpath)
        if self._deferred:
            self._burst_timer = loop.call_later(
                0 if len(due) > BURST_SLICE else BURST_STEP, self._flush_deferred
            )

    # -- one file ---------------------------------------------------------------------------------
    def findings_for(self, vpath: str) -> list[Finding]:
        """The file's own findings now (MEMORY.md: with the composed prompt block)."""
        memory = self.session.store.get(vpath)
        if memory is None:
            return []
        ctx = self.session.context()
        if memory.is_index:
            memories = list(self.session.store.memories())
            block = compose(memories, memory, ctx.active)
            return check_memory(memory, ctx, block=block, known={m.vpath for m in memories})
        return check_memory(memory, ctx)

    def to_json(self, findings: Sequence[Finding], lines: Sequence[str]) -> list[dict]:
        return diagnostics_json(findings, lines, self.session.encoding, self.session.uri_of, self._lines_of)

    def _lines_of(self, vpath: str) -> Sequence[str]:
        memory = self.session.store.get(vpath)
        return memory.lines if memory is not None else ()

    def file_diagnostics(self, vpath: str) -> list[dict]:
        memory = self.session.store.get(vpath)
        return self.to_json(self.findings_for(vpath), memory.lines) if memory is not None else []

    def resolve(self, source: str, uri: str) -> list[dict]:
        """The publisher's way back to a source's current diagnostics (for bulk-published entries)."""
        vpath = self.session.vpath_of(uri)
        return self.file_diagnostics(vpath) if source == "file" and vpath else []

    def recheck(self, vpath: str) -> None:
        memory = self.session.store.get(vpath)
        uri = self.session.uri_of(vpath)
        if memory is None:
            self._extra.pop(("recall", vpath), None)
            self.publisher.publish("file", uri, [])
            self.publisher.publish("recall", uri, [])
        elif not memory.is_index:
            found = self.to_json(check_memory(memory, self.session.context()), memory.lines)
            self.publisher.publish("file", uri, found, self.versions(uri))
        if (memory is not None and memory.is_index) or self._listing_changed(vpath, memory):
            self.schedule_index_check()

    def publish_extra(self, source: str, vpath: str, findings: list[Finding]) -> None:
        """Findings another unit computed for a memory (KM601 from recall), under their own source."""
        if self._extra.get((source, vpath), []) == findings:
            return  # recomputed on every keystroke; republish only what changed
        self._extra[(source, vpath)] = findings
        memory = self.session.store.get(vpath)
        if memory is None:
            return
        uri = self.session.uri_of(vpath)
        self.publisher.publish(source, uri, self.to_json(findings, memory.lines), self.versions(uri))

    def extra(self, source: str, vpath: str) -> list[Finding]:
        """What another unit last handed in for a memory under `source` (their quick fixes too)."""
        return self._extra.get((source, vpath), [])

    def _listing_changed(self, vpath: str, memory: Memory | None) -> bool:
        key = _listing_key(memory)
        before = self._listing.get(vpath, _UNSEEN)
        if before is _UNSEEN and self._baseline:
            before = _listing_key(self._baseline.pop(vpath, None))
        self._listing[vpath] = key
        return before != key

    # -- MEMORY.md --------------------------------------------------------------------------------
    def schedule_index_check(self, delay: float = INDEX_DEBOUNCE) -> None:
        loop = self.loop
        if loop is None:
            return
        if self._index_timer is not None:
            self._index_timer.cancel()
        self._index_timer = loop.call_later(delay, self._start_index_check, loop)

    def _start_index_check(self, loop: asyncio.AbstractEventLoop) -> None:
        self._index_timer = None
        self.scheduler.run(self._index_diagnostics, loop=loop).add_done_callback(self._index_done)

    def _index_diagnostics(self) -> list[dict] | None:
        if self.session.store.index_file() is None:
            return None
        return self.file_diagnostics(INDEX_VPATH)

    def _index_done(self, future: asyncio.Future) -> None:
        if future.cancelled() or future.exception() is not None:
            if not future.cancelled():
                log.warning("MEMORY.md check failed: %r", future.exception())
            return
        uri = self.session.uri_of(INDEX_VPATH)
        if future.result() is not None and self.session.store.index_file() is not None:
            self.publisher.publish("file", uri, future.result(), self.versions(uri))

    # -- the whole store --------------------------------------------------------------------------
    def store_frames(self) -> tuple[bytes, set[str]]:
        """Check the whole store and frame every non-empty result (thread-safe: no protocol state)."""
        results = check_store(self.session.store, self.session.context())
        frames, uris = [], set()
        for vpath, findings in results.items():
            if findings:
                memory = self.session.store.get(vpath)
                uri = self.session.uri_of(vpath)
                uris.add(uri)
                frames.append(diagnostics_frame(uri, self.to_json(findings, memory.lines if memory else ())))
        self.session.store.compact()  # checked: closed files need no more than their listing entry now
        return b"".join(frames), uris

    def send_store_frames(self, frames: bytes, uris: set[str]) -> None:
        """Publish a whole-store check computed off the loop; open buffers are rechecked, not overwritten."""
        for uri in self.publisher.uris("file") - uris:
            self.publisher.publish("file", uri, [])
        self.publisher.publish_bulk("file", frames, uris)
        self.recheck_open()

    def recheck_open(self) -> None:
        """After a check of the whole store: the open buffers checked again (MEMORY.md too when one lists
        otherwise than its file)."""
        self._baseline = self.session.store.disk_view()
        self._listing = {}
        for vpath in (m.vpath for m in self.session.store.overlay_memories()):
            self.recheck(vpath)

    def republish_all(self) -> None:
        """After a rescan: recompute the whole store off the loop, then publish."""
        loop = self.loop
        if loop is None:
            return
        self.scheduler.run(self.store_frames, loop=loop).add_done_callback(
            lambda f: None if f.cancelled() or f.exception() else self.send_store_frames(*f.result())
        )

    # -- settings files ---------------------------------------------------------------------------
    def settings_diagnostics(self) -> dict[str, list[dict]]:
        """uri → KM700/KM701 diagnostics for every settings file in effect (off the loop: reads files)."""
        settings = self.session.file_settings()
        texts = {f.path: f.text for f in settings.files}  # read once, bounded, by the settings loader
        out = {}
        for path, findings in settings_findings(settings).items():
            lines = texts.get(path, "").splitlines()
            out[path_to_uri(path)] = self.to_json(findings, lines) if findings else []
        return out

    def publish_settings(self, by_uri: dict[str, list[dict]]) -> None:
        for uri in self.publisher.uris("store") - set(by_uri):
            if uri_to_path(uri) is not None and uri.endswith("/settings.toml"):
                self.publisher.publish("store", uri, [])
        for uri, diagnostics in by_uri.items():
            self.publisher.publish("store", uri, diagnostics, self.versions(uri))

    def refresh_settings(self) -> None:
        loop = self.loop
        if loop is not None:
            self.scheduler.run(self.settings_diagnostics, loop=loop).add_done_callback(
                lambda f: None if f.cancelled() or f.exception() else self.publish_settings(f.result())
            )

    def _poll_settings(self) -> None:
        while not self._stop.wait(SETTINGS_POLL):
            active = [w for w in self.session.active() if os.path.isabs(w)]
            paths = [global_settings_path(), *(project_settings_path(w) for w in active)]
            seen = {p: _stat_key(p) for p in paths}
            if seen != self._settings_seen:
                self._settings_seen = seen
                loop = self.loop
                if loop is not None and self.session.ready.is_set():
                    loop.call_soon_threadsafe(self.refresh_settings)


_UNSEEN = object()


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _stat_key(path: Path) -> tuple[float, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime, st.st_size)


def _listing_key(memory: Memory | None) -> object:
    """What MEMORY.md's check sees of a memory: its listing entry (None: not listed)."""
    if memory is None or memory.is_index:
        return None
    return (memory.category, memory.stamp, listing_line(memory))
