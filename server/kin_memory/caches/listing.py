"""The store's listing, kept in the findings cache: a warm start of an unchanged store takes its files from
here instead of walking the store.

Walking 100,000 files costs each start-up worker a quarter of a second of Python (an entry object, its
type and name tests, a tuple per file), and every worker walked the whole store to keep its share. A
folder's ctime moves whenever an entry is added to it, removed or renamed, and when its permissions change;
so when every folder the last scan listed still has the ctime it had then, the scan would list the same
files, and a stat per folder replaces the walk. Files changed in place are not a folder's business: the
start still stats every file it checks.

Kept only from a scan that met no symlinked memory file (its verdict hangs on a target elsewhere) and
trusted only for folders whose ctime was older than the scan by a racy window: a change in the same clock
tick as the scan's own look could leave the ctime as it was. The window is that tick with a wide margin:
RACY_FINE where the filesystem stamps below the second (its ctime has nanoseconds: the kernel's coarse
clock ticks every few milliseconds), RACY_COARSE where it stamps whole seconds (FAT, some network
filesystems).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import stat as stat_module
import time
from itertools import repeat
from pathlib import Path
from typing import Any

from ..store.root import VIRTUAL_ROOT
from ..store.scan import ScanProblem, ScanTree
from .segments import SEGMENTS

log = logging.getLogger(__name__)

RACY_FINE = 0.05  # seconds before the scan a folder's last change must be for its ctime to be trusted
RACY_COARSE = 2.0  # the same, for a folder whose ctime is a whole second (a filesystem stamping seconds)
NS = 1_000_000_000
# Folders changed since the listing was kept that are listed again rather than walking the whole store:
# at most this many, or one in RELIST_SHARE of the store's folders when that is more.
RELIST_MIN = 64
RELIST_SHARE = 20
TREE_KEY = "tree"  # the meta row: the folders, MEMORY.md, the scan's problems

# (real path, vpath, segment) of each file; MEMORY.md's vpath or None; the scan's problems
Listing = tuple[list[tuple[str, str, int]], str | None, list[ScanProblem]]


def keep(
    conn: sqlite3.Connection,
    root: str,
    tree: ScanTree,
    segments: dict[int, list[str]],
    index_vpath: str | None,
    problems: list[ScanProblem],
) -> None:
    """Keep what a scan found (its files' vpaths by segment); nothing when it met anything unsure."""
    if tree.unsure:
        return
    meta = {
        "root": root,
        "at": tree.started,
        "folders": tree.folders,
        "index": index_vpath,
        "problems": [[p.vpath, p.reason] for p in problems],
    }
    cut = len(VIRTUAL_ROOT)
    try:
        # Each segment's files below the store's root ("/facts/x.md"), unescaped where JSON allows.
        rows = [
            (seg, json.dumps([vpath[cut:] for vpath in segments.get(seg, [])], ensure_ascii=False))
            for seg in range(SEGMENTS)
        ]
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM listing")
            conn.executemany("INSERT INTO listing VALUES (?, ?)", rows)
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (TREE_KEY, json.dumps(meta)))
    except (sqlite3.Error, UnicodeError) as exc:  # a name that is not UTF-8: the store is walked
        log.info("store listing not kept: %s", exc)


def racy(ctime: int) -> float:
    """The seconds a folder's ctime must be older than a scan for the scan's listing of it to be trusted."""
    return RACY_FINE if ctime % NS else RACY_COARSE


def trusted(ctime: int, at: float) -> bool:
    """Whether a folder whose last change is `ctime` (ns) was listed as it is by a scan begun at `at`."""
    return ctime < int((at - racy(ctime)) * 1e9)


def settled(tree: ScanTree) -> bool:
    """Whether every folder the walk listed had last changed long enough before it began (what `kept`
    will ask of them)."""
    return all(trusted(ctime, tree.started) for _, ctime in tree.folders)


def walk_and_keep(conn: sqlite3.Connection, root: Path, wait: float = RACY_COARSE) -> None:
    """Walk the store and keep its listing (see `keep`); when it met folders that had just changed,
    through `confirm_and_keep` if they are old enough within `wait` seconds, else not at all."""
    from ..store.scan import scan_names
    from .segments import segment_of

    tree = ScanTree()
    files, problems = scan_names(root, tree)
    if tree.unsure:
        forget(conn)
        return
    segments: dict[int, list[str]] = {}
    index_vpath = None
    for _, vpath, is_index in files:
        if is_index:
            index_vpath = vpath
        else:
            segments.setdefault(segment_of(vpath), []).append(vpath)
    del files
    if settled(tree):
        keep(conn, str(root), tree, segments, index_vpath, problems)
    elif _ready_at(tree) - time.time() <= wait:
        confirm_and_keep(conn, str(root), tree, segments, index_vpath, problems)


def _ready_at(tree: ScanTree) -> float:
    """When every folder the walk met will be old enough for its listing to be trusted (epoch seconds)."""
    return max((ctime / 1e9 + racy(ctime) for _, ctime in tree.folders if not trusted(ctime, tree.started)),
               default=0.0)  # fmt: skip


def confirm_and_keep(
    conn: sqlite3.Connection,
    root: str,
    tree: ScanTree,
    segments: dict[int, list[str]],
    index_vpath: str | None,
    problems: list[ScanProblem],
) -> None:
    """Keep a walk that met folders which had just changed (the hidden folder made in the root at a first
    start, a memory written a moment before), which a later start could not trust as they are: once they
    are old enough, each is stat'ed and listed again, and the walk is kept as of then when each still
    holds what the walk found in it (nothing is kept otherwise: the next start walks)."""
    fresh = [(path, ctime) for path, ctime in tree.folders if not trusted(ctime, tree.started)]
    time.sleep(min(max(RACY_FINE, RACY_COARSE), max(0.0, _ready_at(tree) - time.time())) + 0.01)
    confirmed = time.time()
    vpaths = [v for files in segments.values() for v in files] + ([index_vpath] if index_vpath else [])
    for path, ctime in fresh:
        if _entries_now(path, ctime) != _entries_walked(path, root, tree, vpaths):
            return
    keep(conn, root, ScanTree(confirmed, tree.folders, tree.unsure), segments, index_vpath, problems)


def _entries_now(folder: str, ctime: int) -> tuple[set[str], set[str]] | None:
    """(the memory files, the folders) in a folder as a walk lists them now; None when its ctime moved
    or it holds what the kept listing cannot answer for (a symlinked memory)."""
    files: set[str] = set()
    folders: set[str] = set()
    try:
        if os.stat(folder).st_ctime_ns != ctime:
            return None
        for entry in os.scandir(folder):
            name = entry.name
            if name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                folders.add(name)
            elif name.endswith(".md"):
                if entry.is_symlink():
                    return None
                files.add(name)
    except OSError:
        return None
    return files, folders


def _entries_walked(folder: str, root: str, tree: ScanTree, vpaths: list[str]) -> tuple[set[str], set[str]]:
    inside = VIRTUAL_ROOT + folder[len(root) :]
    files = {name for parent, _, name in (v.rpartition("/") for v in vpaths) if parent == inside}
    folders = {name for parent, _, name in (p.rpartition("/") for p, _ in tree.folders) if parent == folder}
    return files, folders


def forget(conn: sqlite3.Connection) -> None:
    """Drop the kept listing (a scan that could not keep its own makes the old one untrustworthy too:
    it may hold a folder whose ctime is back where it was)."""
    try:
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM listing")
            conn.execute("DELETE FROM meta WHERE key = ?", (TREE_KEY,))
    except sqlite3.Error as exc:
        log.info("store listing not dropped: %s", exc)


def kept(conn: sqlite3.Connection, root: str, shard: tuple[int, int] = (0, 1)) -> Listing | None:
    """The files of this shard's segments as the last scan listed them, with the folders changed since
    (a few: files written or removed while the editor was closed) listed again; None when too many
    changed, or for anything a scan would not have left (the store is walked)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (TREE_KEY,)).fetchone()
        meta = json.loads(row[0]) if row else None
        if not (isinstance(meta, dict) and meta.get("root") == root):
            return None
        changed = _changed_folders(meta)
        if changed is None:
            return None
        index, count = shard
        rows = conn.execute("SELECT seg, files FROM listing WHERE seg % ? = ?", (count, index)).fetchall()
        if sorted(seg for seg, _ in rows) != [s for s in range(SEGMENTS) if s % count == index]:
            return None
        files = _files(root, rows)
    except (sqlite3.Error, ValueError, TypeError, RecursionError):
        return None
    problems = meta.get("problems")
    index_vpath = meta.get("index")
    if not (files is not None and isinstance(problems, list) and _problems_ok(problems)):
        return None
    if not (index_vpath is None or isinstance(index_vpath, str)):
        return None
    listing = files, index_vpath, [ScanProblem(vpath, reason) for vpath, reason in problems]
    if changed:
        return _relisted(Path(root), listing, changed, [path for path, _ in meta["folders"]], shard)
    return listing


def _changed_folders(meta: dict[str, Any]) -> list[str] | None:
    """The folders the kept scan listed whose ctime moved since (or which it could not trust, or which
    are gone); None when the kept tree is not usable or too much of it changed."""
    at, folders = meta.get("at"), meta.get("folders")
    if not (isinstance(at, (int, float)) and isinstance(folders, list) and folders):
        return None
    stat = os.stat
    changed: list[str] = []
    try:
        for path, ctime in folders:
            if not isinstance(path, str) or not isinstance(ctime, int):
                return None
            try:
                same = trusted(ctime, at) and stat(path).st_ctime_ns == ctime
            except OSError:
                same = False
            if not same:
                changed.append(path)
    except (ValueError, TypeError):
        return None
    return changed if len(changed) <= max(RELIST_MIN, len(folders) // RELIST_SHARE) else None


def _relisted(root: Path, listing: Listing, changed: list[str], folders: list[str],
              shard: tuple[int, int]) -> Listing | None:  # fmt: skip
    """The kept listing with the changed folders listed again (and new subfolders walked whole), as a
    scan would list the store now; None when a listing met something the kept listing cannot answer for
    (a symlinked memory, a folder it could not stat)."""
    from ..store.scan import scan_folder
    from .segments import segment_of

    files, index_vpath, problems = listing
    known = set(folders)
    tree = ScanTree()
    relisted: set[str] = set()  # folders whose own files and problems come from a new listing
    removed: set[str] = set()  # folders no longer in the store, with everything below them
    new_files: list[tuple[str, str, bool]] = []
    new_problems: list[ScanProblem] = []
    for folder in sorted(changed, key=_depth):  # a folder's parent first: it may have gone with it
        if folder in removed or _inside(folder, removed):
            continue
        if not _is_folder(folder):
            removed.add(folder)
            continue
        relisted.add(folder)
        found, met, children = scan_folder(root, folder, known, tree)
        new_files += found
        new_problems += met
        removed.update(f for f in folders if _parent(f) == folder and f not in children)
    if tree.unsure:
        return None
    dropped = relisted | removed | {f for f in folders if _inside(f, removed)}
    if str(root) in relisted:
        index_vpath = next((vpath for _, vpath, is_index in new_files if is_index), None)
    index, count = shard
    kept_files = [f for f in files if _parent(f[0]) not in dropped]
    for path, vpath, is_index in new_files:
        seg = segment_of(vpath)
        if not is_index and seg % count == index:
            kept_files.append((path, vpath, seg))
    cut = len(VIRTUAL_ROOT)
    kept_problems = [p for p in problems if not _under_dropped(str(root) + p.vpath[cut:], dropped)]
    return kept_files, index_vpath, kept_problems + new_problems


def _under_dropped(path: str, dropped: set[str]) -> bool:
    """Whether a problem's entry was listed again (it is in a dropped folder, or is one)."""
    return path in dropped or _parent(path) in dropped


def _depth(folder: str) -> int:
    return folder.count(os.sep)


def _parent(path: str) -> str:
    return path.rpartition(os.sep)[0]


def _inside(folder: str, folders: set[str]) -> bool:
    """Whether `folder` lies below one of `folders`."""
    parent = _parent(folder)
    while parent:
        if parent in folders:
            return True
        parent = _parent(parent)
    return False


def _is_folder(path: str) -> bool:
    try:
        return stat_module.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _files(root: str, rows: list[tuple[int, str]]) -> list[tuple[str, str, int]] | None:
    """(path, vpath, segment) of every file of the rows; None when a row holds anything a scan would not
    list. Checked on the text, not per file (a worker takes 50,000 of them): without a backslash no
    string holds a quote, so each `"/` starts one, and none names a hidden file or climbs out."""
    files: list[tuple[str, str, int]] = []
    for seg, text in rows:
        if not isinstance(text, str) or "\\" in text or "/." in text:
            return None
        rels = json.loads(text)
        if not (type(rels) is list and set(map(type, rels)) <= {str} and text.count('"/') == len(rels)):
            return None
        files.extend(zip(map(root.__add__, rels), map(VIRTUAL_ROOT.__add__, rels), repeat(seg)))
    return files


def _problems_ok(problems: list[Any]) -> bool:
    return all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in problems)
