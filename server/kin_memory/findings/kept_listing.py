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
    """The files of this shard's segments as the last scan listed them, when every folder it listed is
    as it was then; None otherwise (the store is walked)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (TREE_KEY,)).fetchone()
        meta = json.loads(row[0]) if row else None
        if not (isinstance(meta, dict) and meta.get("root") == root and _folders_unchanged(meta)):
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
    return files, index_vpath, [ScanProblem(vpath, reason) for vpath, reason in problems]


def _folders_unchanged(meta: dict[str, Any]) -> bool:
    at, folders = meta.get("at"), meta.get("folders")
    if not (isinstance(at, (int, float)) and isinstance(folders, list) and folders):
        return False
    stat = os.stat
    try:
        for path, ctime in folders:
            if not (isinstance(ctime, int) and trusted(ctime, at) and stat(path).st_ctime_ns == ctime):
                return False
    except (OSError, ValueError, TypeError):
        return False
    return True


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
