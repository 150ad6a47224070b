"""Catching up with the disk: what changed while nothing was watching (the server was not running, a
command line wrote) is kept as "external" versions, and the very first time the whole store is kept and
marked reviewed, so the review queue starts with nothing but what an agent (through any door), a model pass
or a sync wrote before it (see waits_for_review) and every later change has something to diff against.

Only files whose freshness key (store/freshness.py) differs from what was last seen are read again: a catch-up over an
unchanged store of 10,000 memories is a scan and one query.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..store.freshness import key_at, unchanged
from ..store.scan import scan_names
from .db import HistoryDB, HistoryUnavailable, database, now
from .versions import Observed, observe, record

BATCH = 500  # memories kept per transaction (the server's captures interleave between batches)
PAUSED_BATCH = 10  # with a pause between batches: a few milliseconds of work each
STATS_PER_PAUSE = 2000  # files compared to what was last seen between two pauses
# The person's own changes (what the disk held before anyone watched, the editor's saves, a restore, the
# sweep they set up, a sync conflict they resolved): the only ones the first catch-up takes as reviewed.
PERSONS_OWN = ("external", "edit", "restore", "sweep", "sync-resolve")


def waits_for_review(source: str) -> bool:
    """The change-selection rule of the review queue's first catch-up: a change from any other writer
    (an agent through any door: the command line's `tool`, MCP, the SDK, the editor's tool command; a
    proposal; a memory that arrived by sync) waits in the queue until the person reviews it."""
    return source not in PERSONS_OWN


@dataclass(frozen=True)
class SyncStats:
    read: int  # files read because they changed since last seen
    kept: int  # versions kept
    first: bool  # the first catch-up of this store: everything was marked reviewed


def _seen(root: Path) -> dict[str, int]:
    with database(root).transaction() as conn:
        return dict(conn.execute("SELECT vpath, key FROM files"))


def _changed(
    root: Path, seen: dict[str, int], pause: Callable[[], None] | None = None
) -> tuple[list[str], list[str]]:
    """(memories to read again, memories gone since last seen)."""
    files, _problems = scan_names(root)  # strings: a Path per file costs tens of MB at 100k memories
    present: set[str] = set()
    todo: list[str] = []
    for n, (path, vpath, _is_index) in enumerate(files):
        if pause is not None and n % STATS_PER_PAUSE == 0:
            pause()
        present.add(vpath)
        key = key_at(path)
        if key is not None and not unchanged(seen.get(vpath), key):
            todo.append(vpath)
    return todo, sorted(set(seen) - present)


def catch_up(root: Path | str, pause: Callable[[], None] | None = None) -> SyncStats:
    """Keep every change made while nothing was watching; the first time, mark the store reviewed.
    `pause` is called between small batches (a server lets the queries someone waits for go first:
    the first start of a big store reads every file). Raises HistoryUnavailable when the version
    database cannot be used."""
    root = Path(os.path.realpath(os.fspath(root)))
    db = database(root)
    with db.transaction() as conn:
        first = HistoryDB.meta(conn, "baseline") is None
    todo, gone = _changed(root, _seen(root), pause)
    kept = 0
    step = PAUSED_BATCH if pause is not None else BATCH
    for start in range(0, len(todo), step):
        if pause is not None:
            pause()
        observed = observe(root, todo[start : start + step])
        kept += _keep(db, observed)
    kept += _keep(db, [Observed(v, None) for v in gone])
    if first:
        with db.transaction() as conn:
            if HistoryDB.meta(conn, "baseline") is None:  # another process may have done it meanwhile
                # The baseline is what the person had before anyone watched: an agent's or a model
                # pass's write kept before it stays in the queue, diffed against what was there before.
                sources = [row[0] for row in conn.execute("SELECT DISTINCT source FROM versions")]
                own = [s for s in sources if not waits_for_review(s)] or [""]
                conn.execute(
                    "INSERT OR REPLACE INTO reviewed(vpath, sha, time) SELECT v.vpath, v.sha, ? FROM versions v "
                    "WHERE v.id IN (SELECT max(id) FROM versions "
                    f"WHERE source IN ({', '.join('?' * len(own))}) GROUP BY vpath) AND v.sha IS NOT NULL",
                    (now(), *own),
                )
                HistoryDB.set_meta(conn, "baseline", repr(now()))
    return SyncStats(len(todo), kept, first)


def _keep(db: HistoryDB, observed: list[Observed]) -> int:
    if not observed:
        return 0
    when = now()
    with db.transaction() as conn:
        return sum(record(conn, seen, "external", when) is not None for seen in observed)


__all__ = ["HistoryUnavailable", "SyncStats", "catch_up", "waits_for_review"]
