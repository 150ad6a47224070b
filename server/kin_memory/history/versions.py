"""Keeping versions: every write the product makes keeps the memory's previous content first, then the
new one, labelled with who wrote it; what the watcher sees from outside is kept as it is observed.

A version is (memory, time kept, source, content hash); a deletion is a version without content. A
content equal to the memory's newest version is not kept again, so the same write seen twice (by the
tool and then by the watcher) is one version. History never breaks the write it accompanies: a store
whose version database cannot be used is logged once and the write goes on.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..store.freshness import kept_key
from ..store.memory import MAX_READ_BYTES
from ..store.paths import INDEX_NAME, is_memory_rel, virtual_of_rel
from ..store.reader import Refused
from ..store.store import folder_too_deep
from ..tool.guard import GuardError, open_for_read, resolve
from . import retention
from .db import HistoryDB, HistoryUnavailable, database, now

Source = Literal["tool", "proposal", "sweep", "edit", "external", "restore", "agent"]
SOURCES: tuple[str, ...] = ("tool", "proposal", "sweep", "edit", "external", "restore", "agent")
# A version first seen by a watcher (the language server was quicker than the writer's own record, e.g. an
# agent writing through `kin-memory mcp`) takes the writer's label when the writer records the same content
# this soon after. A buffer reloaded from disk makes that capture look like a save from the editor: "edit".
RELABELLED = ("external", "edit")
RELABEL_SECONDS = 5.0
# Writes the person saw as they were made: their own saves in the editor, and a proposal they reviewed and
# applied. Kept in history and taken as reviewed, unless the memory was already waiting for review (someone
# else's change under theirs stays in the queue, and theirs with it).
SEEN_AS_WRITTEN = ("edit", "proposal")

log = logging.getLogger("kin_memory.history")
_reported: set[str] = set()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Observed:
    """What a memory holds on disk now: its bytes (None: absent), the stat they were read with and when
    the reading began (for its freshness key)."""

    vpath: str
    data: bytes | None
    st: os.stat_result | None = None
    read_at: float = 0.0


def _is_tracked(parts: tuple[str, ...]) -> bool:
    return is_memory_rel(parts) or parts == (INDEX_NAME,)


def _read(root: Path, vpath: str) -> list[Observed] | None:
    """The memories at `vpath` now: the file, or every memory file below a folder (links are not
    followed: deleting or renaming a link leaves its target's history alone). None when the path is not
    one the guard accepts or cannot be read."""
    try:
        t = resolve(root, vpath)
    except GuardError:
        return None
    if t.is_root or os.path.islink(t.lexical):
        return None if t.is_root else []
    read_at = time.time()
    try:
        data, st = open_for_read(t, limit=MAX_READ_BYTES)
    except FileNotFoundError:
        return [Observed(vpath, None)] if _is_tracked(t.parts) else []
    except IsADirectoryError:
        return _read_folder(root, t.lexical, t.parts) if os.path.isdir(t.lexical) else []
    except (GuardError, Refused, OSError):
        return None
    return [Observed(vpath, data, st, read_at)] if _is_tracked(t.parts) else []


def _read_folder(root: Path, folder: Path, parts: tuple[str, ...]) -> list[Observed]:
    out: list[Observed] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        rel = Path(dirpath).relative_to(folder).parts
        # Below the scan's nesting limit nothing is a memory: not walked (a tree can be 1,000 deep)
        dirnames[:] = (
            [] if folder_too_deep((*parts, *rel)) else sorted(d for d in dirnames if not d.startswith("."))
        )
        for name in sorted(filenames):
            file_parts = (*parts, *rel, name)
            if not _is_tracked(file_parts):
                continue
            got = _read(root, virtual_of_rel("/".join(file_parts)))
            out += got or []
    return out


def observe(root: Path, vpaths: Iterable[str]) -> list[Observed]:
    """Every memory at these paths as it is on disk now (unreadable or refused paths are left out)."""
    out: list[Observed] = []
    for vpath in dict.fromkeys(vpaths):
        out += _read(root, vpath) or []
    return out


def record(
    conn: sqlite3.Connection, seen: Observed, source: str, when: float, *, relabel: bool = False
) -> int | None:
    """Keep `seen` as the memory's newest version unless it already is; the new version's id. With
    relabel (the caller just wrote this content), a version of it the watcher kept moments ago as
    "external" (or "edit") takes the caller's label."""
    sha = sha256(seen.data) if seen.data is not None else None
    last = HistoryDB.latest(conn, seen.vpath)
    _remember_stat(conn, seen)
    if last is None and sha is None:
        return None  # never seen and absent: nothing to keep
    if last is not None and last.sha == sha:
        if seen.st is not None:  # the same content touched (Mark reviewed): its time is the file's now
            conn.execute("UPDATE versions SET mtime=? WHERE id=?", (seen.st.st_mtime, last.id))
        if relabel and last.source in RELABELLED and when - last.time < RELABEL_SECONDS:
            conn.execute("UPDATE versions SET source=? WHERE id=?", (source, last.id))
            if source in SEEN_AS_WRITTEN:
                _take_as_reviewed(conn, seen.vpath, _sha_before(conn, seen.vpath, last.id), sha)
        return None
    if seen.data is not None and sha is not None:
        HistoryDB.put_blob(conn, sha, seen.data)
    vid = HistoryDB.add_version(conn, seen.vpath, when, source, sha, seen.st.st_mtime if seen.st else None)
    if source in SEEN_AS_WRITTEN:
        _take_as_reviewed(conn, seen.vpath, last.sha if last is not None else None, sha)
    retention.prune_memory(conn, seen.vpath, when)
    return vid


def _sha_before(conn: sqlite3.Connection, vpath: str, vid: int) -> str | None:
    row = conn.execute(
        "SELECT sha FROM versions WHERE vpath=? AND id<? ORDER BY id DESC LIMIT 1", (vpath, vid)
    ).fetchone()
    return row[0] if row else None


def _take_as_reviewed(conn: sqlite3.Connection, vpath: str, previous: str | None, sha: str | None) -> None:
    """The reviewed mark follows a write the person saw, when it stood on what was written before (the
    memory was not waiting for review)."""
    row = conn.execute("SELECT sha FROM reviewed WHERE vpath=?", (vpath,)).fetchone()
    if (row[0] if row else None) != previous:
        return
    if sha is None:
        conn.execute("DELETE FROM reviewed WHERE vpath=?", (vpath,))
    else:
        conn.execute("INSERT OR REPLACE INTO reviewed VALUES(?, ?, ?)", (vpath, sha, now()))


def _remember_stat(conn: sqlite3.Connection, seen: Observed) -> None:
    """The disk state last seen (so a later catch-up re-reads only files that changed since)."""
    if seen.st is None:
        conn.execute("DELETE FROM files WHERE vpath=?", (seen.vpath,))
    else:
        conn.execute(
            "INSERT OR REPLACE INTO files VALUES(?, ?)", (seen.vpath, kept_key(seen.st, seen.read_at))
        )


def keep(
    root: Path | str, observed: Iterable[Observed], source: str, *, written: frozenset[str] = frozenset()
) -> None:
    """Keep each observed content as a version from `source` (best effort: never raises); `written`: the
    memories whose content this source just changed (see record's relabel)."""
    items = list(observed)
    if not items:
        return
    if all(o.data is None for o in items) and not os.path.isdir(root):
        return  # a store not made yet holds nothing to keep (the first write makes it, then is kept)
    db = database(root)
    try:
        when = now()
        with db.transaction() as conn:
            for seen in items:
                record(conn, seen, source, when, relabel=seen.vpath in written)
            retention.prune_total(conn)
    except HistoryUnavailable as exc:
        _report(db.root, exc.reason)


def capture(root: Path | str, vpaths: Iterable[str], source: str = "external") -> None:
    """Keep what these memories hold on disk now (the watcher's and the editor's writes)."""
    root = Path(os.path.realpath(os.fspath(root)))
    keep(root, observe(root, vpaths), source)


@contextlib.contextmanager
def kept(root: Path | str, vpaths: Iterable[str | None], source: str) -> Iterator[None]:
    """Around one write of the product: the previous content of every memory at these paths (a folder:
    each memory in it) is kept first, then what the write left, labelled `source`. A content no version
    holds yet was written by someone else: it is kept as "external"."""
    root = Path(os.path.realpath(os.fspath(root)))
    paths = [p for p in vpaths if p]
    before = observe(root, paths)
    keep(root, before, "external")
    try:
        yield
    finally:
        after = observe(root, [*paths, *(o.vpath for o in before)])
        was = {o.vpath: o.data for o in before}
        keep(
            root,
            after,
            source,
            written=frozenset(o.vpath for o in after if was.get(o.vpath, b"\0") != o.data),
        )


def _report(root: Path, reason: str) -> None:
    key = f"{root}:{reason}"
    if key not in _reported:
        _reported.add(key)
        log.warning("memory history not kept: %s", reason)


def is_regular(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode)
