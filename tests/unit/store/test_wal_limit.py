"""Every database in the hidden folder keeps its write-ahead log within a bound: SQLite never shrinks
the log by itself, and big write-backs with readers around once grew a findings cache's log past 2 GB."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kin_memory.caches.findings import FindingsCache
from kin_memory.history.db import database
from kin_memory.recall.index import RecallIndex
from kin_memory.store.paths import WAL_SIZE_LIMIT


def _limit(conn: sqlite3.Connection) -> tuple[str, int]:
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    return mode, conn.execute("PRAGMA journal_size_limit").fetchone()[0]


def test_each_hidden_database_bounds_its_log(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        assert _limit(cache.conn) == ("wal", WAL_SIZE_LIMIT)
    finally:
        cache.close()
    index = RecallIndex(root)
    assert index._run(_limit, ("", 0)) == ("wal", WAL_SIZE_LIMIT)
    with database(root).transaction() as conn:
        assert _limit(conn) == ("wal", WAL_SIZE_LIMIT)
