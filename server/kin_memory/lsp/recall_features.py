"""Recall over LSP: the index kept in step with the store, body hover, workspace symbols, KM601,
and the `kin.memory.search`, `kin.memory.indexPreview` and `kin.memory.reindex` commands.

All index work runs off the event loop: writes on one writer thread (SQLite has one writer anyway),
queries on the server's query pool.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from ..findings import duplicates as km601
from ..recall.render import related_markdown
from ..recall.service import Recall
from ..store.memory import Memory
from ..store.prompt_block import compose
from ..store.workspace import GLOBAL, canonical_workspace
from .server import KinMemoryServer

log = logging.getLogger("kin_memory.lsp")
MAX_SEARCH_RESULTS = 100


class RecallSync:
    """Owns the server's Recall and the queue of files whose index rows are out of date."""

    def __init__(self, ls: KinMemoryServer) -> None:
        self.ls = ls
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kin-memory-index")
        self.pending: set[str] = set()
        self.lock = threading.Lock()
        self.draining = False
        self.synced = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._recall: Recall | None = None

    @property
    def recall(self) -> Recall:
        # The store can move (memoryDir arrives with the client's settings): the index follows it.
        if self._recall is None or self._recall.root != self.ls.root:
            self._recall = Recall(self.ls.root)
            self._recall.index.on_reset = self._refill
        return self._recall

    def _refill(self) -> None:
        """The database was deleted or rebuilt while we run: refill it from the store, on the writer."""
        log.warning("recall index was reset: refilling it from the store")
        self.writer.submit(self._resync)

    def _resync(self) -> None:
        try:
            with self.ls.store.lock:
                on_disk = list(self.ls.store.disk.values())
            stats = self.recall.sync_memories(on_disk)
            with self.ls.store.lock:
                overlays = list(self.ls.store.overlays.values())
            for memory in overlays:
                self.recall.update(memory, overlay=True)
            self._log(f"recall index refilled: {stats.read} memories in {stats.seconds:.2f}s")
        except Exception as exc:  # noqa: BLE001
            log.warning("recall index refill failed: %r", exc)

    def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.writer.submit(self._initial_sync)

    def _initial_sync(self) -> None:
        try:
            with self.ls.store.lock:
                on_disk = list(self.ls.store.disk.values())
            stats = self.recall.sync_memories(on_disk)
            self._log(
                f"recall index: {stats.read} of {stats.files} memories (re)indexed, {stats.removed} removed, "
                f"in {stats.seconds:.2f}s"
            )
        except Exception as exc:  # noqa: BLE001 - recall is an aid: the server keeps serving without it
            log.warning("recall index sync failed: %r", exc)
        finally:
            self.synced.set()
        with self.lock:  # buffers opened meanwhile are indexed as they are now
            self.pending.update(self.ls.store.overlays)
        self._drain()

    def changed(self, vpath: str, _memory: object) -> None:
        with self.lock:
            self.pending.add(vpath)
            if self.draining or not self.synced.is_set():
                return
            self.draining = True
        self.writer.submit(self._drain)

    def _drain(self) -> None:
        while True:
            with self.lock:
                batch, self.pending = self.pending, set()
                if not batch:
                    self.draining = False
                    return
                self.draining = True
            for vpath in sorted(batch):
                try:
                    self._apply(vpath)
                except Exception as exc:  # noqa: BLE001
                    log.warning("recall index update of %s failed: %r", vpath, exc)

    def _apply(self, vpath: str) -> None:
        store = self.ls.store
        memory = store.get(vpath)
        if memory is None:
            self.recall.remove(vpath)
            return
        if memory.is_index:
            return
        with store.lock:
            overlay = vpath in store.overlays
        self.recall.update(memory, overlay=overlay)
        if overlay and self.loop is not None:  # KM601 for the buffers being edited
            found = km601.check(memory, self.recall.duplicates_of(memory, self.ls.context().active))
            self.loop.call_soon_threadsafe(self.ls.set_extra_findings, vpath, found)

    def _log(self, message: str) -> None:
        log.info(message)
        if self.loop is not None:
            self.loop.call_soon_threadsafe(
                lambda: self.ls.window_log_message(
                    lsp.LogMessageParams(type=lsp.MessageType.Info, message=f"kin-memory: {message}")
                )
            )


def register(server: KinMemoryServer) -> None:
    sync = RecallSync(server)
    server.recall_sync = sync  # type: ignore[attr-defined]
    server.recheck_hooks.append(sync.changed)
    server.ready_hooks.append(sync.start)
    server.body_hover = lambda memory, line, col: _body_hover(server, sync, memory, line, col)

    @server.feature(lsp.WORKSPACE_SYMBOL)
    async def workspace_symbol(
        ls: KinMemoryServer, params: lsp.WorkspaceSymbolParams
    ) -> list[lsp.SymbolInformation]:
        active = ls.context().active
        loop = asyncio.get_running_loop()
        hits = await loop.run_in_executor(
            ls.query_pool, lambda: sync.recall.search(params.query, active, 50, prefix_last=True)
        )
        return [
            lsp.SymbolInformation(
                name=h.title or h.vpath,
                kind=lsp.SymbolKind.File,
                container_name=h.vpath,
                location=lsp.Location(
                    uri=ls.uri_of(h.vpath),
                    range=lsp.Range(
                        start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)
                    ),
                ),
            )
            for h, _ in hits
        ]

    @server.command("kin.memory.search")
    async def search(ls: KinMemoryServer, args: dict) -> dict:
        query = _required(args, "query", str)
        limit = args.get("limit", 5)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise JsonRpcInvalidParams("limit must be a positive integer")
        active = _active(ls, args)
        loop = asyncio.get_running_loop()
        hits = await loop.run_in_executor(
            ls.query_pool, lambda: sync.recall.search(query, active, min(limit, MAX_SEARCH_RESULTS))
        )
        return {
            "results": [
                {
                    "path": h.vpath,
                    "uri": ls.uri_of(h.vpath),
                    "category": h.category,
                    "workspace": h.workspace,
                    "title": h.title,
                    "snippet": snip,
                    "score": float(f"{h.score:.6g}"),
                }
                for h, snip in hits
            ]
        }

    @server.command("kin.memory.indexPreview")
    async def index_preview(ls: KinMemoryServer, args: dict | None = None) -> dict:
        active = _active(ls, args if isinstance(args, dict) else {})
        loop = asyncio.get_running_loop()
        block = await loop.run_in_executor(
            None, lambda: compose(list(ls.store.memories()), ls.store.index_file(), active)
        )
        text = block.text
        return {
            "text": text,
            "lines": block.kept,
            "bytes": len(text.encode("utf-8")),
            "truncated": block.truncated,
            "cut": _cut_summary(block),
            "hidden": block.hidden,
        }

    @server.command("kin.memory.reindex")
    async def reindex(ls: KinMemoryServer, args: dict | None = None) -> dict:
        token = f"kin-memory-reindex-{time.monotonic_ns()}"
        progress = await _begin_progress(ls, token, "Reindexing memories")
        loop = asyncio.get_running_loop()

        def report(done: int, total: int) -> None:
            if progress:
                loop.call_soon_threadsafe(
                    ls.work_done_progress.report,
                    token,
                    lsp.WorkDoneProgressReport(
                        message=f"{done} of {total}", percentage=int(100 * done / max(total, 1))
                    ),
                )

        def cancelled() -> bool:
            future = ls.work_done_progress.tokens.get(token) if progress else None
            return bool(future is not None and future.cancelled())

        def run():
            with ls.store.lock:
                on_disk = list(ls.store.disk.values())
            return sync.recall.reindex(on_disk, progress=report, cancelled=cancelled, chunk=1000)

        stats = await loop.run_in_executor(sync.writer, run)
        was_cancelled = cancelled()
        if progress:
            ls.work_done_progress.end(
                token,
                lsp.WorkDoneProgressEnd(
                    message="cancelled" if was_cancelled else f"{stats.read} memories indexed"
                ),
            )
        return {"files": stats.read, "seconds": round(stats.seconds, 3), "cancelled": was_cancelled}


def _body_hover(ls: KinMemoryServer, sync: RecallSync, memory: Memory, line: int, col: int) -> str | None:
    related = sync.recall.related_to(memory, line, col, ls.context().active)
    return related_markdown(related, time.time()) if related else None


def _required(args: object, key: str, kind: type):
    if not isinstance(args, dict) or key not in args:
        raise JsonRpcInvalidParams(f"missing required key: {key}")
    value = args[key]
    if not isinstance(value, kind):
        raise JsonRpcInvalidParams(f"{key} must be a {kind.__name__}")
    return value


def _active(ls: KinMemoryServer, args: dict) -> tuple[str, ...]:
    workspace = args.get("workspace")
    if workspace is None:
        return ls.context().active
    if not isinstance(workspace, str):
        raise JsonRpcInvalidParams("workspace must be a string")
    if workspace in ("", "none"):
        return ()
    return (workspace if workspace == GLOBAL or "/" not in workspace else canonical_workspace(workspace),)


def _cut_summary(block) -> str:
    if not block.truncated:
        return ""
    dropped = len(block.lines) - block.kept
    cap = "200-line" if block.cut_reason == "lines" else "25 KB"
    return f"{dropped} lines past the {cap} cap are not inlined"


async def _begin_progress(ls: KinMemoryServer, token: str, title: str) -> bool:
    caps = ls.client_caps
    if not (caps.window and caps.window.work_done_progress):
        return False
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), 5)
    except Exception:  # noqa: BLE001 - no progress UI is no reason to fail the command
        return False
    ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, cancellable=True, percentage=0))
    return True
