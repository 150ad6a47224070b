"""Documents and files: open buffers as store overlays, and changes on disk from the client or our watcher.

Every change goes into the store, whose events drive diagnostics and recall; nothing here publishes.
Our own watcher (watchfiles, in a thread) runs because Neovim offers no dynamic file-watch registration.
A watch is bound to the store folder's inode: when the folder is removed or replaced (or the root setting
moves it) the watch is re-armed on the folder that is there now, and the store is rescanned.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...store.paths import relative_parts
from ...store.store import scan_refuses
from ..handlers import handler
from ..scheduler import Scheduler
from ..session import Session, path_to_uri, uri_to_path

log = logging.getLogger("kin_memory.lsp")
# How long what a buffer's edits reuse (its memory path, the refusal rules' verdict, the file's mtime) is
# trusted: each keystroke would otherwise stat the file and each folder above it. Opening and saving always
# look again, and so does the first edit after this long.
BUFFER_FACTS_TTL = 1.0  # seconds
# Milliseconds the watcher waits for a change before it reports in: its first report says it is armed,
# and the start-up's catch-up (which finds what changed before that) waits for it.
WATCH_TICK = 100


class Documents:
    def __init__(self, session: Session, scheduler: Scheduler, workspace_docs) -> None:
        self.session = session
        self.scheduler = scheduler
        self.docs = workspace_docs  # () → pygls Workspace (its text_documents)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.held: set[Path] = set()  # changes seen before the startup load completed
        self.stop_event = threading.Event()
        self.armed = threading.Event()  # the watcher has reported once: changes from then on are seen
        # uri -> (root, vpath or None when not a memory, path, mtime, when looked up); see BUFFER_FACTS_TTL
        self._facts: dict[str, tuple[Path, str | None, Path | None, float, float]] = {}
        # told of a memory's buffer saved (vpath, path) or closed (vpath): the sync checks a save (unsaved_sync)
        self.saved_hooks: list[Callable[[str, Path], None]] = []
        self.closed_hooks: list[Callable[[str], None]] = []

    def register(self, server: LanguageServer) -> None:
        server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)(handler(self.did_open))
        server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)(handler(self.did_change))
        server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)(handler(self.did_save))
        server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)(handler(self.did_close))
        server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)(handler(self.did_change_watched))

    # -- buffers ----------------------------------------------------------------------------------
    def did_open(self, params: lsp.DidOpenTextDocumentParams) -> None:
        self.sync_buffer(params.text_document.uri)

    def did_change(self, params: lsp.DidChangeTextDocumentParams) -> None:
        self.changed(params.text_document.uri)

    def changed(self, uri: str) -> None:
        """The buffer's text changed (pygls's document holds the new text)."""
        self.sync_buffer(uri, editing=True)

    def did_save(self, params: lsp.DidSaveTextDocumentParams) -> None:
        """The editor wrote the buffer to its file: the store reads the disk now (not when the watcher
        reports, nor only if one runs), and says the write was the editor's (history labels it so)."""
        uri = params.text_document.uri
        self.sync_buffer(uri)
        vpath = self.session.vpath_of(uri)
        path = uri_to_path(uri)
        if not vpath or path is None or self._refused(path):
            return
        if not self.session.ready.is_set():
            self.held.add(path)  # the catch-up after the load keeps it
            return
        self.session.store.refresh_path(path, saved=True)
        for hook in self.saved_hooks:
            hook(vpath, path)

    def did_close(self, params: lsp.DidCloseTextDocumentParams) -> None:
        self._facts.pop(params.text_document.uri, None)
        vpath = self.session.vpath_of(params.text_document.uri)
        path = uri_to_path(params.text_document.uri)
        if vpath and path:
            for closed in self.closed_hooks:
                closed(vpath)
            self.session.store.drop_overlay(vpath)
            self.session.store.refresh_path(path)

    def version(self, uri: str) -> int | None:
        doc = self.docs().text_documents.get(uri)
        return doc.version if doc is not None else None

    def sync_buffer(self, uri: str, editing: bool = False) -> None:
        facts = self._facts.get(uri) if editing else None
        root = self.session.root
        if facts is None or facts[0] != root or time.monotonic() - facts[4] > BUFFER_FACTS_TTL:
            facts = self._facts[uri] = self._look_up(uri, root)
        _, vpath, path, mtime, _ = facts
        if not vpath or path is None:
            return
        doc = self.docs().get_text_document(uri)
        self.session.store.set_overlay(path, doc.source, mtime)

    def _look_up(self, uri: str, root: Path) -> tuple[Path, str | None, Path | None, float, float]:
        vpath = self.session.vpath_of(uri)
        path = uri_to_path(uri)
        if not vpath or path is None or self._refused(path):
            return (root, None, None, 0.0, time.monotonic())
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = time.time()
        return (root, vpath, path, mtime, time.monotonic())

    # -- files on disk ----------------------------------------------------------------------------
    def did_change_watched(self, params: lsp.DidChangeWatchedFilesParams) -> None:
        self.apply_changes({p for p in (uri_to_path(c.uri) for c in params.changes) if p is not None})

    def _refused(self, path: Path) -> bool:
        """A file the cold scan would not list (under a symlinked folder, a link out of the store, too
        deep): the watcher may follow links the scan refuses, and an editor may open such a file, but
        neither makes it a memory. store.scan_refuses is the one rule both apply."""
        root = self.session.root
        return relative_parts(root, path) is not None and scan_refuses(root, path) is not None

    def external_change(self, path: Path) -> None:
        """A file changed on disk (the watcher, the client, or one of our own commands wrote it). Before
        the startup load is complete the change is held, like the watcher's: applied earlier, the load's
        snapshot would overwrite it."""
        if not self.session.ready.is_set():
            self.held.add(path)
            return
        self._apply_change(path)

    def _apply_change(self, path: Path) -> None:
        """One the scan would not list is handed to the store all the same: its refresh drops it (so a
        file that was a memory until its folder became a link goes away) and never reads it."""
        vpath = self.session.vpath_of(path_to_uri(path))
        if vpath is None:
            if path.is_dir() or not path.exists():  # a folder came or went: rescan, always correct
                self.session.store.load_all()
            return
        if self.docs().text_documents.get(self.session.uri_of(vpath)) is None:
            self.session.store.drop_overlay(vpath, emit=False)
        self.session.store.refresh_path(path)

    def apply_changes(self, paths: set[Path]) -> None:
        if not self.session.ready.is_set():
            self.held |= paths
            return
        for path in sorted(paths):
            try:
                self._apply_change(path)
            except Exception as exc:  # noqa: BLE001 - one bad path must not stop the others
                log.warning("could not process change of %s: %s", path.name, exc)

    def release_held(self) -> None:
        held, self.held = self.held, set()
        if held:
            self.apply_changes(held)

    def rescan(self) -> None:
        try:
            self.session.store.load_all()
        except Exception as exc:  # noqa: BLE001
            log.warning("could not rescan the store: %s", exc)

    def start_watcher(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.scheduler.spawn("watch", self._watch)

    def _watch(self) -> None:
        try:
            from watchfiles import watch
        except ImportError:
            return
        rearmed = False
        while not self.stop_event.is_set():
            root = self.session.root
            ident = _folder_identity(root)
            if ident is None:  # no store folder (yet, or any more): look again shortly
                self.armed.set()  # nothing to miss: whatever appears is found when the watch starts
                self.stop_event.wait(0.25)
                continue
            try:
                for changes in watch(root, stop_event=self.stop_event, debounce=50, step=20, rust_timeout=WATCH_TICK,
                                     yield_on_timeout=True, raise_interrupt=False):  # fmt: skip
                    self.armed.set()
                    if rearmed:  # the new watch is live: whatever appeared meanwhile is picked up now
                        rearmed = False
                        self._post(self.rescan)
                    paths = {Path(p) for _, p in changes if not _hidden_below(root, Path(p))}
                    if paths:
                        self._post(self.apply_changes, paths)
                    if _folder_identity(root) != ident or self.session.root != root:
                        self._post(self.rescan)  # gone or replaced: what it held is gone
                        break
            except Exception as exc:  # noqa: BLE001 - the watcher failed: log, retry, keep serving
                log.warning("file watcher stopped: %s", exc)
                self.stop_event.wait(1.0)
            rearmed = True

    def _post(self, fn, *args) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(fn, *args)


def _hidden_below(root: Path, path: Path) -> bool:
    try:
        return any(part.startswith(".") for part in path.relative_to(root).parts)
    except ValueError:
        return True


def _folder_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None
