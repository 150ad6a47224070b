"""The version store's database: `.kin-index/history.sqlite3` (0600, never opened through a link).

Content-addressed: a version names the SHA-256 of the bytes it had, and each distinct content is stored
once (zlib-compressed) however many memories or versions share it. The same file holds the reviewed
marks (what the user last accepted, per memory) and the retention limits, so the command line and the
language server share all of it. SQLite opens by name, so the hidden folder and the database files are
checked to be no links right before each connection (see store.paths).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..store.paths import HiddenRefused, hidden_file_problem, open_hidden_dir, open_hidden_file, use_wal

DB_NAME = "history.sqlite3"
DB_SUFFIXES = ("", "-wal", "-shm", "-journal")
# 2: `files` keeps each file's freshness key (store/freshness.py); 3: a version keeps its file's mtime
SCHEMA_VERSION = 3

log = logging.getLogger("kin_memory.history")

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE blobs(sha TEXT PRIMARY KEY, size INTEGER NOT NULL, stored INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE versions(id INTEGER PRIMARY KEY AUTOINCREMENT, vpath TEXT NOT NULL, time REAL NOT NULL,
                      source TEXT NOT NULL, sha TEXT, mtime REAL);
CREATE INDEX versions_path ON versions(vpath, id);
CREATE INDEX versions_sha ON versions(sha);
CREATE TABLE files(vpath TEXT PRIMARY KEY, key INTEGER NOT NULL);
CREATE TABLE reviewed(vpath TEXT PRIMARY KEY, sha TEXT NOT NULL, time REAL NOT NULL);
"""


def _upgrade_from_1(conn: sqlite3.Connection) -> None:
    """Version 1 kept (mtime_ns, size) per file, which misses a same-size rewrite with its old mtime put
    back. The table only says which files to read again: dropped, the next catch-up reads every file once
    (an unchanged content is not kept twice). The versions themselves are untouched."""
    with _transaction(conn):
        conn.execute("DROP TABLE IF EXISTS files")
        conn.execute("CREATE TABLE files(vpath TEXT PRIMARY KEY, key INTEGER NOT NULL)")
        conn.execute("UPDATE meta SET value='2' WHERE key='schema'")


def _upgrade_from_2(conn: sqlite3.Connection) -> None:
    """Version 2 kept no file times: a version kept before has none (a restore of it takes the time of
    the restore, as before)."""
    with _transaction(conn):
        if "mtime" not in {r[1] for r in conn.execute("PRAGMA table_info(versions)")}:
            conn.execute("ALTER TABLE versions ADD COLUMN mtime REAL")
        conn.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))


class HistoryUnavailable(Exception):
    """The version store cannot be used (a planted link, a full disk, a broken database)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Retention:
    """How much history is kept: per memory the newest `versions` or those younger than `days` (the
    newest version of each memory and the reviewed one are always kept), and at most `max_bytes` of
    stored content in all (the oldest versions go first)."""

    versions: int = 20
    days: float = 90.0
    max_bytes: int = 50 * 1024 * 1024


@dataclass(frozen=True)
class VersionRow:
    id: int
    vpath: str
    time: float
    source: str
    sha: str | None  # None: the memory did not exist (deleted)


def _check_place(root: Path) -> None:
    os.close(open_hidden_dir(root, create=True))
    for suffix in DB_SUFFIXES:
        problem = hidden_file_problem(root, DB_NAME + suffix)
        if problem is not None:
            raise HiddenRefused(problem)


def _create_file(root: Path) -> None:
    """Make the database file 0600 before SQLite does (SQLite would follow the umask)."""
    dir_fd = open_hidden_dir(root, create=True)
    try:
        os.close(open_hidden_file(dir_fd, DB_NAME, os.O_RDWR | os.O_CREAT, 0o600))
    finally:
        os.close(dir_fd)


class HistoryDB:
    """One connection per store per process, used under a lock (tool writes, the watcher's captures and
    commands run on different threads)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / ".kin-index" / DB_NAME
        self.lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None

    def _connect(self) -> sqlite3.Connection:
        _check_place(self.root)
        _create_file(self.root)
        conn = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False, isolation_level=None)
        try:
            use_wal(conn)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not tables:
                with _transaction(conn):
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        conn.execute(statement)
                    conn.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (str(SCHEMA_VERSION),))
                    conn.execute("INSERT OR REPLACE INTO meta VALUES('total', '0')")
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is not None and row[0] == "1":
                _upgrade_from_1(conn)
                row = ("2",)
            if row is not None and row[0] == "2":
                _upgrade_from_2(conn)
                row = (str(SCHEMA_VERSION),)
            if row is None or row[0] != str(SCHEMA_VERSION):
                raise sqlite3.DatabaseError("another schema version")
        except BaseException:
            conn.close()
            raise
        for suffix in DB_SUFFIXES:  # SQLite makes its side files with the umask: keep them private
            with contextlib.suppress(OSError):
                os.chmod(str(self.path) + suffix, 0o600)
        return conn

    def conn(self) -> sqlite3.Connection:
        """The live connection; a database deleted or replaced meanwhile is opened anew."""
        try:
            inode: int | None = os.lstat(self.path).st_ino
        except OSError:
            inode = None
        if self._conn is None or inode != self._inode:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None
            self._conn = self._connect()
            self._inode = os.lstat(self.path).st_ino
        return self._conn

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection inside one write transaction, under the process lock; any failure is
        HistoryUnavailable with a sentence (nothing is half-written)."""
        with self.lock:
            try:
                conn = self.conn()
                with _transaction(conn):
                    yield conn
            except HiddenRefused as exc:
                raise HistoryUnavailable(exc.reason) from None
            except (sqlite3.Error, OSError) as exc:
                raise HistoryUnavailable(f"the version store could not be used ({_reason(exc)})") from None

    # -- reads (inside a transaction) ----------------------------------------------------------------
    @staticmethod
    def latest(conn: sqlite3.Connection, vpath: str) -> VersionRow | None:
        row = conn.execute(
            "SELECT id, vpath, time, source, sha FROM versions WHERE vpath=? ORDER BY id DESC LIMIT 1",
            (vpath,),
        ).fetchone()
        return VersionRow(*row) if row else None

    @staticmethod
    def versions(conn: sqlite3.Connection, vpath: str) -> list[VersionRow]:
        rows = conn.execute(
            "SELECT id, vpath, time, source, sha FROM versions WHERE vpath=? ORDER BY id DESC", (vpath,)
        ).fetchall()
        return [VersionRow(*r) for r in rows]

    @staticmethod
    def version(conn: sqlite3.Connection, vid: int) -> VersionRow | None:
        row = conn.execute("SELECT id, vpath, time, source, sha FROM versions WHERE id=?", (vid,)).fetchone()
        return VersionRow(*row) if row else None

    @staticmethod
    def blob(conn: sqlite3.Connection, sha: str) -> bytes | None:
        row = conn.execute("SELECT data FROM blobs WHERE sha=?", (sha,)).fetchone()
        return zlib.decompress(row[0]) if row else None

    @staticmethod
    def blob_size(conn: sqlite3.Connection, sha: str) -> int:
        row = conn.execute("SELECT size FROM blobs WHERE sha=?", (sha,)).fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def meta(conn: sqlite3.Connection, key: str) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    # -- writes (inside a transaction) ---------------------------------------------------------------
    @staticmethod
    def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))

    @staticmethod
    def put_blob(conn: sqlite3.Connection, sha: str, data: bytes) -> None:
        if conn.execute("SELECT 1 FROM blobs WHERE sha=?", (sha,)).fetchone():
            return  # deduplicated: each content once
        packed = zlib.compress(data, 6)
        conn.execute("INSERT INTO blobs VALUES(?, ?, ?, ?)", (sha, len(data), len(packed), packed))
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key='total'", (len(packed),))

    @staticmethod
    def add_version(
        conn: sqlite3.Connection,
        vpath: str,
        when: float,
        source: str,
        sha: str | None,
        mtime: float | None = None,
    ) -> int:
        cur = conn.execute(
            "INSERT INTO versions(vpath, time, source, sha, mtime) VALUES(?, ?, ?, ?, ?)",
            (vpath, when, source, sha, mtime),
        )
        return int(cur.lastrowid or 0)

    @staticmethod
    def mtime_of(conn: sqlite3.Connection, vpath: str, sha: str) -> float | None:
        """When the file last held this content, as its version recorded it (None: not recorded)."""
        row = conn.execute(
            "SELECT mtime FROM versions WHERE vpath=? AND sha=? AND mtime IS NOT NULL ORDER BY id DESC LIMIT 1",
            (vpath, sha),
        ).fetchone()
        return float(row[0]) if row else None

    @staticmethod
    def drop_unreferenced(conn: sqlite3.Connection, shas: set[str]) -> None:
        """Remove the blobs among `shas` that no version and no reviewed mark names any more."""
        for sha in shas:
            if conn.execute("SELECT 1 FROM versions WHERE sha=? LIMIT 1", (sha,)).fetchone():
                continue
            if conn.execute("SELECT 1 FROM reviewed WHERE sha=? LIMIT 1", (sha,)).fetchone():
                continue
            row = conn.execute("SELECT stored FROM blobs WHERE sha=?", (sha,)).fetchone()
            if row:
                conn.execute("DELETE FROM blobs WHERE sha=?", (sha,))
                conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) - ? WHERE key='total'", (row[0],)
                )


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    text = str(exc)
    return text if text and len(text) < 120 else "the database refused it"


_DBS: OrderedDict[str, HistoryDB] = OrderedDict()
_DBS_LOCK = threading.Lock()
OPEN_STORES = 4  # connections kept open (3 descriptors each); a process works on one store, tests on many


def database(root: Path | str) -> HistoryDB:
    """The store's version database (one object per store and process; the least recently used beyond
    OPEN_STORES is closed, and reopened when used again)."""
    key = os.path.realpath(os.fspath(root))
    with _DBS_LOCK:
        db = _DBS.get(key)
        if db is None:
            db = _DBS[key] = HistoryDB(Path(key))
        _DBS.move_to_end(key)
        while len(_DBS) > OPEN_STORES:
            _key, old = _DBS.popitem(last=False)
            old.close()
        return db


def now() -> float:
    return time.time()
