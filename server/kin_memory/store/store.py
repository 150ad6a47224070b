"""The Store: the one owner of which memory files exist and what they say."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from .events import StoreEvent, StoreEvents
from .freshness import unchanged
from .frontmatter import Frontmatter
from .memory import Memory, from_text, load
from .paths import INDEX_VPATH, virtual_path

# Re-exported: the scan is the store's, kept in a light module for commands answered from caches.
from .scan import (
    MAX_DEPTH as MAX_DEPTH,
)
from .scan import (
    ScanProblem as ScanProblem,
)
from .scan import (
    folder_too_deep as folder_too_deep,
)
from .scan import (
    link_verdict as link_verdict,
)
from .scan import (
    scan as scan,
)
from .scan import (
    scan_names as scan_names,
)
from .scan import (
    scan_refuses as scan_refuses,
)

EXPANDED_KEPT = 64  # compacted files recently read whole, kept whole


@dataclass
class Store:
    """Path → Memory for the disk view, plus overlays (open editor buffers) on top."""

    root: Path
    disk: dict[str, Memory] = field(default_factory=dict)
    overlays: dict[str, Memory] = field(default_factory=dict)
    problems: list[ScanProblem] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)
    _expanded: OrderedDict[str, Memory] = field(default_factory=OrderedDict, repr=False)
    compacting: bool = False  # closed files are kept compacted (the language server's mode)
    events: StoreEvents = field(default_factory=StoreEvents, repr=False)

    def load_all(self, *, compact: bool = False) -> None:
        """Read every file; with compact, keep each closed file compacted as soon as it is read (the
        peak memory of a 100k store is then never that of 100k full texts). Emits "reset"."""
        files, problems = scan(self.root)
        disk = {}
        for path, vpath, is_index in files:
            memory = load(path, vpath, is_index=is_index)
            if memory.read_error and not os.path.lexists(path):
                continue  # deleted between the scan and the read: gone, not unreadable
            disk[vpath] = memory.compacted() if compact else memory
        with self.lock:
            self.disk = disk
            self.problems = problems
            self._expanded.clear()
            self.compacting = compact
        self.events.emit(StoreEvent("reset"))

    def adopt(self, disk: dict[str, Memory], problems: list[ScanProblem]) -> None:
        """Take a whole store read elsewhere (the cold-start workers' compact records) as the disk view,
        kept compacted from now on. Emits "reset"."""
        with self.lock:
            self.disk = disk
            self.problems = problems
            self._expanded.clear()
            self.compacting = True
        self.events.emit(StoreEvent("reset"))

    def compact(self) -> None:
        """Compact every file read from disk (open buffers are overlays and stay whole)."""
        with self.lock:
            self.disk = {v: m.compacted() for v, m in self.disk.items()}
            self._expanded.clear()
            self.compacting = True

    def get(self, vpath: str) -> Memory | None:
        """The whole memory: a compacted file is read again (and kept for a while: hovers and code
        actions tend to come in runs on the same file)."""
        with self.lock:
            memory = self.overlays.get(vpath) or self.disk.get(vpath)
            if memory is None or not memory.compact:
                return memory
            whole = self._expanded.get(vpath)
            if whole is not None and unchanged(memory.key, whole.key):
                self._expanded.move_to_end(vpath)
                return whole
        whole = _reread(self.root, memory)
        with self.lock:
            self._expanded[vpath] = whole
            while len(self._expanded) > EXPANDED_KEPT:
                self._expanded.popitem(last=False)
        return whole

    def memories(self) -> Iterator[Memory]:
        """The effective view: overlays win over disk; MEMORY.md excluded."""
        with self.lock:
            merged = {**self.disk, **self.overlays}
        return (m for m in merged.values() if not m.is_index)

    def index_file(self) -> Memory | None:
        return self.get(INDEX_VPATH)

    def all(self) -> list[Memory]:
        with self.lock:
            return list({**self.disk, **self.overlays}.values())

    def disk_memories(self) -> list[Memory]:
        """What is on disk (MEMORY.md included), ignoring open buffers: what the index keeps."""
        with self.lock:
            return list(self.disk.values())

    def disk_view(self) -> dict[str, Memory]:
        """vpath → memory on disk, as it is now (a copy: later changes replace entries, not these)."""
        with self.lock:
            return dict(self.disk)

    def overlay_memories(self) -> list[Memory]:
        with self.lock:
            return list(self.overlays.values())

    def is_open(self, vpath: str) -> bool:
        """Whether an editor buffer stands in for the file."""
        with self.lock:
            return vpath in self.overlays

    def scan_problems(self) -> list[ScanProblem]:
        with self.lock:
            return list(self.problems)

    def refresh_path(self, path: Path, *, saved: bool = False) -> tuple[str, Memory | None]:
        """Re-read one file from disk (after an external change); None when it is gone, or is not a
        file the scan would list (under a symlinked folder, a link out of the store: see
        scan_refuses). Emits "created", "changed" or "deleted" (`saved`: the editor wrote it)."""
        vpath = virtual_path(self.root, path)
        is_index = vpath == INDEX_VPATH
        exists = os.path.lexists(path) and not os.path.isdir(path) and scan_refuses(self.root, path) is None
        memory = load(path, vpath, is_index=is_index) if exists else None
        with self.lock:
            existed = vpath in self.disk
            self._expanded.pop(vpath, None)
            if memory is None:
                self.disk.pop(vpath, None)
            elif self.compacting and not memory.is_index:
                self.disk[vpath] = memory.compacted()
                self._expanded[vpath] = memory  # about to be rechecked whole
            else:
                self.disk[vpath] = memory
            overlay = vpath in self.overlays
        if memory is None:
            if existed:
                self.events.emit(StoreEvent("deleted", vpath, overlay, saved=saved))
        else:
            self.events.emit(StoreEvent("changed" if existed else "created", vpath, overlay, saved=saved))
        return vpath, memory

    def set_overlay(self, path: Path, text: str, mtime: float) -> Memory:
        vpath = virtual_path(self.root, path)
        is_index = vpath == INDEX_VPATH
        memory = from_text(
            path, vpath, text, mtime, len(text.encode("utf-8", "surrogatepass")), is_index=is_index
        )
        with self.lock:
            known = vpath in self.overlays or vpath in self.disk
            self.overlays[vpath] = memory
        self.events.emit(StoreEvent("changed" if known else "created", vpath, overlay=True, buffer=True))
        return memory

    def drop_overlay(self, vpath: str, *, emit: bool = True) -> None:
        """The buffer closed: the disk's version is the memory again (emits "changed" or "deleted")."""
        with self.lock:
            dropped = self.overlays.pop(vpath, None)
            on_disk = vpath in self.disk
        if dropped is not None and emit:
            self.events.emit(StoreEvent("changed" if on_disk else "deleted", vpath))


def _reread(root: Path, memory: Memory) -> Memory:
    """A compacted memory read whole again. A link that dangled when it was listed may point out of the
    store by now (its target appeared later, where no watcher looks): it is not read through then."""
    if os.path.islink(memory.path) and scan_refuses(root, memory.path) is not None:
        return replace(
            memory,
            text="",
            lines=("",),
            frontmatter=Frontmatter("none"),
            compact=False,
            read_error="symlink pointing outside the store: not read",
        )
    return load(memory.path, memory.vpath, is_index=memory.is_index)


def load_store(root: Path) -> Store:
    """A store read whole from disk (the CLI's view: no buffers, no compaction)."""
    store = Store(root)
    store.load_all()
    return store
