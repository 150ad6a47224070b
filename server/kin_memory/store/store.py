"""The Store: the one owner of which memory files exist and what they say."""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from .events import StoreEvent, StoreEvents
from .frontmatter import Frontmatter
from .memory import Memory, from_text, load
from .paths import (
    INDEX_NAME,
    INDEX_VPATH,
    is_hidden,
    is_memory_rel,
    relative_parts,
    virtual_of_rel,
    virtual_path,
)

MAX_DEPTH = 32  # folders below the root the scan enters; the tool creates nothing deeper
EXPANDED_KEPT = 64  # compacted files recently read whole, kept whole


def folder_too_deep(folder_parts: tuple[str, ...]) -> bool:
    """Whether a folder (its components below the root) lies past the scan's nesting limit: the scan
    does not enter it, so nothing in it is a memory, and the tool makes nothing there."""
    return len(folder_parts) > MAX_DEPTH


@dataclass(frozen=True)
class ScanProblem:
    vpath: str
    reason: str


# -- containment: what the scan lists, shared with the watcher's single-file refresh -------------------


def _within(path: str, real_root: str) -> bool:
    return path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)


def link_verdict(link: str, real_root: str) -> str | None:
    """For a `*.md` entry that is a symlink: None when the scan reads it (its target stays inside the
    store, or it dangles and the read reports that), "folder" when it points at a folder (skipped),
    "outside" when it points at an existing file outside the store (refused, reported)."""
    target = os.path.realpath(link)
    if os.path.isdir(target):
        return "folder"
    if not _within(target, real_root) and os.path.exists(target):
        return "outside"
    return None


def scan_refuses(root: Path, path: Path) -> str | None:
    """Why the scan would not list `path` (a file under root) as a file of the store, None when it
    would, or when nothing is there to refuse. The scan enters no hidden folder, no symlinked folder and
    nothing past MAX_DEPTH, and reads a symlinked file only when its target stays inside the store; a
    change reported under any of those (by the editor or the file watcher, which may follow links the
    scan does not) must be ignored the same way."""
    parts = relative_parts(root, path)
    if not parts:
        return "not below the store"
    if is_hidden(parts):
        return "a hidden name"
    if folder_too_deep(parts[:-1]):
        return "folder nesting too deep"
    folder = os.fspath(root)
    for name in parts[:-1]:
        folder = os.path.join(folder, name)
        try:
            st = os.lstat(folder)
        except OSError:
            return None  # gone: nothing to read, the caller sees the file missing
        if stat.S_ISLNK(st.st_mode):
            return "inside a symlinked folder: not followed"
        if not stat.S_ISDIR(st.st_mode):
            return None
    entry = os.path.join(folder, parts[-1])
    if os.path.islink(entry) and link_verdict(entry, os.path.realpath(root)) is not None:
        return "symlink pointing outside the store (or at a folder): not read"
    return None


def scan(root: Path) -> tuple[list[tuple[Path, str, bool]], list[ScanProblem]]:
    """Walk the store: (real path, virtual path, is_index) for every memory file and MEMORY.md."""
    found, problems = scan_names(root)
    return [(Path(path), vpath, is_index) for path, vpath, is_index in found], problems


def scan_names(root: Path) -> tuple[list[tuple[str, str, bool]], list[ScanProblem]]:
    """Walk the store: (real path as a string, virtual path, is_index) for every memory file and
    MEMORY.md (strings: a warm start of a big store lists every file and need not build a Path each).

    Hidden names are skipped (the index folder lives there); symlinked directories are not followed
    (loops, escapes); a symlinked file is kept only when its target stays inside the store.
    """
    found: list[tuple[str, str, bool]] = []
    problems: list[ScanProblem] = []
    real_root = os.path.realpath(root)

    def vp(parts: tuple[str, ...]) -> str:
        return virtual_of_rel("/".join(parts))

    def walk(directory: str, parts: tuple[str, ...]) -> None:
        if folder_too_deep(parts):
            problems.append(
                ScanProblem(virtual_path(root, Path(directory)), "folder nesting too deep: not scanned")
            )
            return
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            if parts:
                problems.append(
                    ScanProblem(virtual_path(root, Path(directory)), f"cannot list folder: {exc.strerror}")
                )
            return
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            rel = (*parts, name)
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if name.endswith(".md"):
                    problems.append(
                        ScanProblem(
                            virtual_path(root, Path(entry.path)), "a folder named like a memory file: ignored"
                        )
                    )
                walk(entry.path, rel)
                continue
            if not name.endswith(".md"):
                continue
            if is_link:
                verdict = link_verdict(entry.path, real_root)
                if verdict == "folder":
                    continue
                if verdict == "outside":
                    problems.append(
                        ScanProblem(
                            virtual_path(root, Path(entry.path)),
                            "symlink pointing outside the store: not read",
                        )
                    )
                    continue
            if rel == (INDEX_NAME,):
                found.append((entry.path, vp(rel), True))
            elif is_memory_rel(rel):
                found.append((entry.path, vp(rel), False))

    walk(str(root), ())
    return found, problems


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
            if whole is not None and (whole.mtime, whole.size) == (memory.mtime, memory.size):
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

    def refresh_path(self, path: Path) -> tuple[str, Memory | None]:
        """Re-read one file from disk (after an external change); None when it is gone, or is not a
        file the scan would list (under a symlinked folder, a link out of the store: see
        scan_refuses). Emits "created", "changed" or "deleted"."""
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
                self.events.emit(StoreEvent("deleted", vpath, overlay))
        else:
            self.events.emit(StoreEvent("changed" if existed else "created", vpath, overlay))
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
        self.events.emit(StoreEvent("changed" if known else "created", vpath, overlay=True))
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
