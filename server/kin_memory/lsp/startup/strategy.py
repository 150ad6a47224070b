"""How the first whole-store check is done: in this process, or by workers forked before the LSP stack
imported (see shards.py). The server calls `first_check` and knows nothing about worker processes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from ...findings.cached import stat_of
from ...findings.run import check_memory
from ...store.memory import Memory, load
from ...store.paths import real_path
from ...store.prompt_block import compose_from
from ...store.store import scan_names
from ..convert import diagnostics_json
from ..features.diagnostics import INDEX_VPATH, Diagnostics
from ..session import Session
from .shards import OnFrames, ShardResult, Shards

log = logging.getLogger("kin_memory.lsp")


class Startup(Protocol):
    async def first_check(self, session: Session, diagnostics: Diagnostics) -> tuple[int, str]:
        """Load the store and publish its diagnostics; returns (memories checked, how)."""

    def settle(self, session: Session) -> None:
        """Once the session is ready (its store events handled as usual): catch up with whatever the
        first check could have missed. Runs off the event loop."""


class InProcessStartup:
    """Parsing, checking and JSON framing all run off the event loop; the loop only writes the bytes."""

    async def first_check(self, session: Session, diagnostics: Diagnostics) -> tuple[int, str]:
        def load_and_check() -> tuple[bytes, set[str]]:
            session.store.load_all()
            return diagnostics.store_frames()

        diagnostics.send_store_frames(*await asyncio.get_running_loop().run_in_executor(None, load_and_check))
        return sum(1 for _ in session.store.memories()), ""

    def settle(self, session: Session) -> None:
        """The load ran with the watcher started: nothing to catch up."""


class ShardedStartup:
    """Take the workers' checks when they were started for the root this session serves; otherwise (or
    when a worker fails) check in process."""

    def __init__(self, shards: Shards | None) -> None:
        self.shards = shards
        self.fallback: InProcessStartup | None = None  # when the workers could not be used

    def _collect(self, session: Session, on_frames: OnFrames) -> list[ShardResult] | None:
        shards, self.shards = self.shards, None
        if shards is None:
            return None
        if shards.root != session.root:
            shards.close()
            return None
        return shards.collect(session.context(), session.encoding, on_frames=on_frames)

    async def first_check(self, session: Session, diagnostics: Diagnostics) -> tuple[int, str]:
        loop = asyncio.get_running_loop()

        def stream(vpaths: list[str], frames: bytes) -> None:  # from the collecting thread
            loop.call_soon_threadsafe(self._publish_frames, session, diagnostics, vpaths, frames)

        # Each worker's diagnostics go out as they arrive, before its records become the store.
        results = await loop.run_in_executor(None, self._collect, session, stream)
        if results is None:
            self.fallback = InProcessStartup()
            return await self.fallback.first_check(session, diagnostics)
        count = self._publish(session, diagnostics, results)
        await loop.run_in_executor(None, self._adopt, session, results)
        diagnostics.recheck_open()
        hits = sum(r.hits for r in results)
        return count, f" by {len(results)} worker processes ({hits} unchanged files from the findings cache)"

    def _adopt(self, session: Session, results: list[ShardResult]) -> None:
        """The server's store, made of the compact memories the workers' records became (no file is read
        twice; a file without a record, unreadable or unusual, is read here)."""
        root = session.root
        disk: dict[str, Memory] = {}
        for r in results:
            for vpath, memory in r.memories.items():
                disk[vpath] = (
                    memory if memory is not None else load(real_path(root, vpath), vpath).compacted()
                )
            r.memories = {}
        index = session.store.disk.get(INDEX_VPATH)
        if index is not None:
            disk[INDEX_VPATH] = index
        session.store.adopt(disk, [p for r in results for p in r.problems])

    def settle(self, session: Session) -> None:
        """A stat per file catches what moved between the workers' scan and the watcher's start: those
        files are read again, and their store events recheck and reindex them like any change."""
        if self.fallback is not None:
            return
        root = session.root
        store = session.store
        known = {m.vpath: (m.mtime, m.size) for m in store.disk_memories() if not m.is_index}
        files, _ = scan_names(root)
        now = {vpath: stat_of(path) for path, vpath, is_index in files if not is_index}
        moved = {v for v, st in now.items() if known.get(v) != st}
        moved |= {v for v in known if v not in now}
        for vpath in sorted(moved):
            store.refresh_path(real_path(root, vpath))

    @staticmethod
    def _publish_frames(session: Session, diagnostics: Diagnostics, vpaths: list[str], frames: bytes) -> None:
        diagnostics.publisher.publish_bulk("file", frames, {session.uri_of(v) for v in vpaths})

    def _publish(self, session: Session, diagnostics: Diagnostics, results: list[ShardResult]) -> int:
        """MEMORY.md's diagnostics, which need the merged listing (the shards' own went out as they
        arrived)."""
        for r in results:  # kept only when nobody streamed them
            for frames in r.frames:
                diagnostics.publisher.publish_bulk("file", frames, ())
        index_vpath = next((r.index_vpath for r in results if r.index_vpath), None)
        if index_vpath:
            index = session.store.refresh_path(session.path_of(index_vpath))[1]
            if index is not None:
                listed = [item for r in results for item in r.listed]
                block = compose_from(listed, sum(r.hidden for r in results), index)
                known = {v for r in results for v in r.memories}
                found = check_memory(index, session.context(), block=block, known=known)
                uri = session.uri_of(INDEX_VPATH)
                diagnostics.publisher.publish("file", uri, diagnostics_json(found, index.lines, session.encoding,
                                                                             session.uri_of))  # fmt: skip
        for r in results:  # sent: at 100k memories these are tens of MB, not worth keeping
            r.frames, r.listed = [], []
        return sum(len(r.memories) for r in results)
