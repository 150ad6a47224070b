"""Persistent SQLite FTS5 recall index inside the store root."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..store.workspace import GLOBAL
from .query import match_expr
from .records import RecallDoc
from .snippet import snippet

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
INDEX_DIR = ".kin-index"
DB_NAME = "recall.sqlite3"
PREFERENCE_BOOST = 2.0
PREFERENCE_HALF_LIFE_DAYS = 90.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs(
  id INTEGER PRIMARY KEY,
  vpath TEXT UNIQUE NOT NULL,
  title TEXT NOT NULL,
  category TEXT NOT NULL,
  workspace TEXT,
  mtime REAL NOT NULL,
  size INTEGER NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
  vpath, title, body, tokenize='unicode61', prefix='2 3'
);
"""


@dataclass(frozen=True)
class Hit:
    vpath: str
    title: str
    category: str
    workspace: str | None
    snippet: str
    score: float
    mtime: float


class RecallIndex:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.dir = self.root / INDEX_DIR
        self.path = self.dir / DB_NAME
        self._local = threading.local()
        self._lock = threading.Lock()

    @classmethod
    def open(cls, root: str | os.PathLike[str]) -> RecallIndex:
        idx = cls(Path(root))
        idx._conn()
        return idx

    # -- connection management -------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            os.chmod(self.dir, 0o700)
        except OSError:
            pass
        conn = sqlite3.connect(self.path, timeout=5.0, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version == 0 and not tables:
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.commit()
        elif version != SCHEMA_VERSION or not {"docs", "fts"} <= tables:
            conn.close()
            raise sqlite3.DatabaseError(f"schema version {version}, expected {SCHEMA_VERSION}")
        else:
            conn.execute("SELECT count(*) FROM docs").fetchone()
            conn.execute("SELECT count(*) FROM fts").fetchone()
        return conn

    def _wipe(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("recall index: cannot remove %s%s: %s", self.path, suffix, exc)

    def _rebuild(self, reason: object) -> sqlite3.Connection:
        log.warning("recall index at %s unusable (%s); rebuilding", self.path, reason)
        old = getattr(self._local, "conn", None)
        if old is not None:
            try:
                old.close()
            except sqlite3.Error:
                pass
            self._local.conn = None
        self._wipe()
        conn = self._connect()
        self._local.conn = conn
        self._local.ino = self._inode()
        return conn

    def _inode(self) -> int | None:
        try:
            return self.path.stat().st_ino
        except OSError:
            return None

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._inode() == self._local.ino:
            return conn
        with self._lock:
            if conn is not None:
                return self._rebuild("database deleted or replaced while open")
            try:
                conn = self._connect()
            except (sqlite3.Error, OSError) as exc:
                return self._rebuild(exc)
            self._local.conn = conn
            self._local.ino = self._inode()
            return conn

    def _run(self, fn: Callable[[sqlite3.Connection], object]) -> object:
        """Run fn on this thread's connection; on database corruption, rebuild and retry once."""
        conn = self._conn()
        try:
            return fn(conn)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            try:
                conn.rollback()
            except sqlite3.Error:
                pass
            with self._lock:
                conn = self._rebuild(exc)
            return fn(conn)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- writes ------------------------------------------------------------------

    def known(self) -> dict[str, tuple[float, int]]:
        def fn(c: sqlite3.Connection) -> dict[str, tuple[float, int]]:
            return {v: (m, s) for v, m, s in c.execute("SELECT vpath, mtime, size FROM docs")}
        return fn_result(self._run(fn))

    def count(self) -> int:
        return int(self._run(lambda c: c.execute("SELECT count(*) FROM docs").fetchone()[0]))

    @staticmethod
    def _delete(c: sqlite3.Connection, vpath: str) -> None:
        row = c.execute("SELECT id FROM docs WHERE vpath=?", (vpath,)).fetchone()
        if row:
            c.execute("DELETE FROM fts WHERE rowid=?", (row[0],))
            c.execute("DELETE FROM docs WHERE id=?", (row[0],))

    def upsert(self, docs: Iterable[RecallDoc]) -> None:
        batch = list(docs)

        def fn(c: sqlite3.Connection) -> None:
            with c:
                for d in batch:
                    self._delete(c, d.vpath)
                    if d.category == "session":
                        continue
                    cur = c.execute(
                        "INSERT INTO docs(vpath,title,category,workspace,mtime,size) VALUES(?,?,?,?,?,?)",
                        (d.vpath, d.title, d.category, d.workspace, d.mtime, d.size))
                    c.execute("INSERT INTO fts(rowid,vpath,title,body) VALUES(?,?,?,?)",
                              (cur.lastrowid, d.vpath, d.title, d.body))
        self._run(fn)

    def remove(self, vpaths: Iterable[str]) -> None:
        batch = list(vpaths)

        def fn(c: sqlite3.Connection) -> None:
            with c:
                for v in batch:
                    self._delete(c, v)
        self._run(fn)

    def refresh(self, stats: Mapping[str, tuple[float, int]],
                load: Callable[[str], RecallDoc | None]) -> int:
        """Bring the index in line with stats {vpath: (mtime, size)}; load only changed docs."""
        known = self.known()
        gone = [v for v in known if v not in stats]
        changed = [v for v, st in stats.items() if known.get(v) != tuple(st)]
        docs: list[RecallDoc] = []
        for v in changed:
            d = load(v)
            if d is None:
                gone.append(v)
            else:
                docs.append(d)
        if gone:
            self.remove(gone)
        if docs:
            self.upsert(docs)
        return len(changed)

    def body(self, vpath: str) -> str | None:
        def fn(c: sqlite3.Connection) -> str | None:
            row = c.execute("SELECT f.body FROM docs d JOIN fts f ON f.rowid=d.id WHERE d.vpath=?",
                            (vpath,)).fetchone()
            return row[0] if row else None
        return self._run(fn)  # type: ignore[return-value]

    # -- queries -----------------------------------------------------------------

    def query(self, text: str, active: tuple[str, ...] = (), limit: int = 5,
              exclude: str | None = None) -> list[Hit]:
        try:
            for mode in ("AND", "OR"):
                expr = match_expr(text, mode)
                if expr is None:
                    return []
                hits = self._query(expr, text, active, limit, exclude)
                if hits:
                    return hits
        except sqlite3.Error as exc:
            log.warning("recall query failed: %s", exc)
        return []

    def _query(self, expr: str, text: str, active: tuple[str, ...], limit: int,
               exclude: str | None) -> list[Hit]:
        where = ""
        params: list[object] = [expr]
        if active:
            where = f" AND (d.workspace IS NULL OR d.workspace = ? OR d.workspace IN ({','.join('?' * len(active))}))"
            params += [GLOBAL, *active]
        if exclude is not None:
            where += " AND d.vpath <> ?"
            params.append(exclude)
        pool = max(limit * 4, 20)
        params.append(pool)
        sql = ("SELECT d.vpath, d.title, d.category, d.workspace, d.mtime, f.body, "
               "bm25(fts, 5.0, 3.0, 1.0) AS r FROM fts f JOIN docs d ON d.id = f.rowid "
               f"WHERE fts MATCH ?{where} ORDER BY r LIMIT ?")
        rows = self._run(lambda c: c.execute(sql, params).fetchall())
        now = time.time()
        hits = []
        for vpath, title, cat, ws, mtime, body, rank in rows:  # type: ignore[union-attr]
            score = -float(rank)
            if cat == "preference":
                age_days = max(0.0, (now - mtime) / 86400.0)
                score *= 1.0 + (PREFERENCE_BOOST - 1.0) * 0.5 ** (age_days / PREFERENCE_HALF_LIFE_DAYS) + 0.25
            hits.append(Hit(vpath, title, cat, ws, snippet(body, text), round(score, 4), mtime))
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]


def fn_result(x: object) -> dict[str, tuple[float, int]]:
    return x  # type: ignore[return-value]
