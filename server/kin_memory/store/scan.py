"""Walking the store: which entries are memory files, kept free of the parser so that a command answered
from the findings cache (a stat per file) imports no more than it needs."""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from .paths import INDEX_NAME, is_hidden, relative_parts, virtual_of_rel, virtual_path

MAX_DEPTH = 32  # folders below the root the scan enters; the tool creates nothing deeper


# A name that is not valid UTF-8 (os.listdir gives it with lone surrogates) is left out of the store
# everywhere alike: the scan, the watcher, history, recall and every cache see only the other memories,
# and the scan reports it once (KM900), so no database ever has to hold a path it cannot encode.
NOT_UTF8 = "a file or folder name that is not valid UTF-8: left out of the store (rename it)"


def is_utf8(name: str) -> bool:
    """Whether a name from the file system decodes as UTF-8 (no lone surrogate in it)."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(path: str) -> str:
    """A path that may hold undecodable bytes, as text every sink and database takes (`\\xff`)."""
    return (
        path if is_utf8(path) else path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    )


def folder_too_deep(folder_parts: tuple[str, ...]) -> bool:
    """Whether a folder (its components below the root) lies past the scan's nesting limit: the scan
    does not enter it, so nothing in it is a memory, and the tool makes nothing there."""
    return len(folder_parts) > MAX_DEPTH


@dataclass(frozen=True)
class ScanProblem:
    vpath: str
    reason: str


@dataclass
class ScanTree:
    """What a scan saw of the store's folders, for keeping its listing (see caches/listing.py):
    each folder it listed with its ctime, taken before the listing (a folder's ctime moves with every
    entry added, removed or renamed in it, and with its permissions), and the symlinked memory files
    met (whose verdict hangs on their target, not on a folder of the store)."""

    started: float = 0.0  # when the scan began (time.time())
    folders: list[tuple[str, int]] = field(default_factory=list)  # (real path, st_ctime_ns)
    unsure: int = 0  # symlinked memory files, folders not stat'ed: the listing is then not kept


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
    if not all(is_utf8(part) for part in parts):
        return NOT_UTF8
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


def listed_at(root: Path, path: str) -> list[tuple[str, str, bool]]:
    """What the scan lists at a path something reported (a watcher): the file itself, or every file below
    a folder, each by the scan's own rule (scan_refuses); [] for anything it does not list, the root
    itself included (a report on the root says nothing of its files)."""
    parts = relative_parts(root, Path(path))
    if not parts:
        return []
    if os.path.isdir(path) and not os.path.islink(path):
        if scan_refuses(root, Path(path, "x.md")) is not None:
            return []  # hidden, a link on the way, too deep: the scan lists nothing in it
        return scan_folder(root, path, set(), ScanTree())[0]
    if not path.endswith(".md") or not os.path.lexists(path) or scan_refuses(root, Path(path)) is not None:
        return []
    return [(path, virtual_of_rel("/".join(parts)), parts == (INDEX_NAME,))]


def scan(root: Path) -> tuple[list[tuple[Path, str, bool]], list[ScanProblem]]:
    """Walk the store: (real path, virtual path, is_index) for every memory file and MEMORY.md."""
    found, problems = scan_names(root)
    return [(Path(path), vpath, is_index) for path, vpath, is_index in found], problems


def scan_names(
    root: Path, tree: ScanTree | None = None
) -> tuple[list[tuple[str, str, bool]], list[ScanProblem]]:
    """Walk the store: (real path as a string, virtual path, is_index) for every memory file and
    MEMORY.md (strings: a warm start of a big store lists every file and need not build a Path each).

    Hidden names are skipped (the index folder lives there); symlinked directories are not followed
    (loops, escapes); a symlinked file is kept only when its target stays inside the store. With
    `tree`, the folders listed are noted in it.
    """
    walk = _Walk(root, tree)
    if tree is not None:
        tree.started = time.time()
    walk.folder(str(root), ())
    return walk.found, walk.problems


def scan_folder(
    root: Path, folder: str, known: set[str], tree: ScanTree
) -> tuple[list[tuple[str, str, bool]], list[ScanProblem], set[str]]:
    """One folder of the store listed as the walk lists it, entering only the subfolders not in `known`
    (new ones, walked whole): (its files and theirs, the problems met, every subfolder it holds now)."""
    walk = _Walk(root, tree, known)
    parts = tuple(p for p in os.path.relpath(folder, root).split(os.sep) if p != ".")
    walk.folder(folder, parts)
    return walk.found, walk.problems, walk.children


class _Walk:
    def __init__(self, root: Path, tree: ScanTree | None, known: set[str] | None = None) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.tree = tree
        self.known = known  # folders not to enter (listed already), when only part of the store is walked
        self.found: list[tuple[str, str, bool]] = []
        self.problems: list[ScanProblem] = []
        self.children: set[str] = set()  # the subfolders of the first folder walked

    def _problem(self, path: str, reason: str) -> None:
        self.problems.append(ScanProblem(shown_name(virtual_path(self.root, Path(path))), reason))

    def folder(self, directory: str, parts: tuple[str, ...], first: bool = True) -> None:
        if folder_too_deep(parts):
            self._problem(directory, "folder nesting too deep: not scanned")
            return
        tree = self.tree
        if tree is not None:
            try:
                tree.folders.append((directory, os.stat(directory).st_ctime_ns))
            except OSError:
                tree.unsure += 1
        try:
            entries = sorted(os.scandir(directory), key=_name)
        except OSError as exc:
            if parts:
                self._problem(directory, f"cannot list folder: {exc.strerror}")
            return
        # Every name below passed the hidden and `*.md` tests on the way: what is_memory_rel asks.
        folder_vpath = virtual_of_rel("/".join(parts)) + "/"
        found = self.found
        root_level = not parts
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            if not is_utf8(name):
                self._problem(entry.path, NOT_UTF8)
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                self._subfolder(entry, (*parts, name), first)
            elif not name.endswith(".md"):
                continue
            elif not is_link:
                found.append((entry.path, folder_vpath + name, root_level and name == INDEX_NAME))
            elif self._link_read(entry):
                found.append((entry.path, folder_vpath + name, root_level and name == INDEX_NAME))

    def _subfolder(self, entry: os.DirEntry[str], parts: tuple[str, ...], first: bool) -> None:
        if entry.name.endswith(".md"):
            self._problem(entry.path, "a folder named like a memory file: ignored")
        if first:
            self.children.add(entry.path)
        if self.known is None or entry.path not in self.known:
            self.folder(entry.path, parts, first=False)

    def _link_read(self, entry: os.DirEntry[str]) -> bool:
        """Whether a symlinked `*.md` is listed (read) as a memory."""
        if self.tree is not None:
            self.tree.unsure += 1
        verdict = link_verdict(entry.path, self.real_root)
        if verdict == "outside":
            self._problem(entry.path, "symlink pointing outside the store: not read")
        return verdict is None


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name
