"""The recall index's database file: a connection per thread, and what happens when it cannot be used.

The database is a cache: when it is corrupt, of another schema version, deleted or replaced underneath
us, it is rebuilt from the files with a log line, never a crash. A database locked by another live
process is not corruption: that error propagates and nothing is wiped.

The hidden folder (or the database file) being a symbolic link is another matter: following it would
write the database, and wipe files on a rebuild, wherever the link points. Then the index refuses: one
log line, every query answers nothing, every write is skipped, and the server keeps serving; as soon as
the folder is a real folder again the index is rebuilt there.

Each thread uses its own connection (WAL: readers never wait for the writer).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..store.paths import (
    HIDDEN_DIR,
    HiddenRefused,
    hidden_file_problem,
    is_transient,
    open_hidden_dir,
    use_wal,
)
from .schema import DB_NAME, DB_SUFFIXES, check_schema, create_schema, schema_state

log = logging.getLogger("kin_memory.recall")
BUSY_TIMEOUT = 5.0  # seconds a connection waits for another process's lock
CONNECT_TRIES = 12  # connections tried when the database answers "not now" (about 1.5 s in all)

T = TypeVar("T")


class IndexUnavailable(Exception):
    """The database cannot be opened even after a rebuild (e.g. the store is read-only)."""


class IndexRefused(IndexUnavailable):
    """The hidden folder or the database is a link (or not what it should be): the index is not used."""


class Database:
    unavailable = IndexUnavailable  # what `run` raises when the database cannot be used now

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.dir = self.root / HIDDEN_DIR
        self.path = self.dir / DB_NAME
        self._local = threading.local()
        self.lock = threading.RLock()
        self.rebuilds = 0
        self.on_reset: Callable[[], None] | None = None  # called when the database had to start empty
        self.on_wipe: Callable[[], None] | None = None  # what is kept in memory of the old one goes
        self._created = False
        self._known_once = False  # the first database of a run starts empty by design: no reset then
        self.refused: str | None = None  # why the index is off (a planted link), None when usable

    # -- opening ---------------------------------------------------------------------------------
    def _check_place(self) -> None:
        """HiddenRefused unless the hidden folder is a real folder (made when missing; never the root:
        a vanished store is not recreated by its cache) and the database files in it are no links.
        SQLite opens by name, so this is checked right before each connection is made."""
        os.close(open_hidden_dir(self.root, create=True))
        for suffix in DB_SUFFIXES:
            problem = hidden_file_problem(self.root, DB_NAME + suffix)
            if problem is not None:
                raise HiddenRefused(problem)

    def _refuse(self, reason: str) -> IndexRefused:
        """Turn the index off (logged once per reason) and drop this thread's connection."""
        self.drop_local()
        if self.refused != reason:
            self.refused = reason
            log.warning("recall index off: %s; search and recall answer nothing until it is fixed", reason)
        return IndexRefused(reason)

    def _connect(self) -> sqlite3.Connection:
        self._check_place()
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None)
        try:
            use_wal(conn)
            version, tables = schema_state(conn)
            if version == 0 and not tables:  # new: create it, unless another connection just did
                self._created = create_schema(conn)
                version, tables = schema_state(conn)
            check_schema(conn, version, tables)
        except BaseException:
            conn.close()
            raise
        try:
            os.chmod(self.path, 0o600)
        except OSError:
            pass
        return conn

    def _connect_patiently(self) -> sqlite3.Connection:
        """A connection, tried again for a while when the database says "not now": some of SQLite's lock
        waits (a database being made or recovered by another connection) answer at once instead of
        waiting out the busy timeout."""
        for attempt in range(CONNECT_TRIES):
            try:
                return self._connect()
            except sqlite3.Error as exc:
                if not is_transient(exc) or attempt == CONNECT_TRIES - 1:
                    raise
            time.sleep(0.02 * (attempt + 1))
        raise AssertionError("unreachable")

    def _inode(self) -> int | None:
        try:  # the entry itself: a database replaced by a link reads as replaced
            return os.lstat(self.path).st_ino
        except OSError:
            return None

    # -- losing it -------------------------------------------------------------------------------
    def wipe(self) -> None:
        """Remove the database files, inside the real hidden folder only (never through a link), and
        forget what was kept in memory of them."""
        if self.on_wipe is not None:
            self.on_wipe()
        try:
            dir_fd = open_hidden_dir(self.root)
        except OSError:  # missing (nothing to wipe) or refused (nothing of ours is there)
            return
        try:
            for suffix in DB_SUFFIXES:
                try:
                    os.unlink(DB_NAME + suffix, dir_fd=dir_fd)
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    log.warning("recall index: cannot remove %s%s: %s", DB_NAME, suffix, exc)
        finally:
            os.close(dir_fd)

    def drop_local(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    def _rebuild(self, reason: object) -> sqlite3.Connection:
        log.warning("recall index unusable (%s): rebuilding it from the files", reason)
        self.rebuilds += 1
        self.drop_local()
        self.wipe()
        try:
            conn = self._connect()
        except HiddenRefused as exc:
            raise self._refuse(exc.reason) from None
        except (sqlite3.Error, OSError) as exc:
            raise IndexUnavailable(str(exc)) from exc
        self._keep(conn)
        self._known_once = True
        if self.on_reset is not None:
            self.on_reset()
        self._created = False
        return conn

    def _keep(self, conn: sqlite3.Connection) -> None:
        self._local.conn = conn
        self._local.ino = self._inode()

    # -- using it --------------------------------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        """This thread's connection, made (or the database rebuilt) when it has none or the file
        under it was deleted or replaced."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.ino == self._inode():
            return conn
        with self.lock:
            if conn is not None:  # the file was deleted or replaced underneath this connection
                self.drop_local()
            try:
                conn = self._connect_patiently()
            except HiddenRefused as exc:
                raise self._refuse(exc.reason) from None
            except (sqlite3.Error, OSError) as exc:
                if is_transient(exc):  # locked by another process (or a full disk): not ours to wipe
                    raise IndexUnavailable(str(exc)) from exc
                return self._rebuild(exc)
            self._keep(conn)
            if self.refused is not None:
                log.warning("recall index back on: %s is a real folder again", HIDDEN_DIR)
                self.refused = None
                self._known_once = True  # what was skipped while refused is refilled (on_reset)
        self._notify_reset()
        return conn

    def _notify_reset(self) -> None:
        """A fresh, empty database replaced the one we knew (first use, deleted, rebuilt): the owner
        refills it from the files (on_reset), outside our locks."""
        if self._created:
            self._created = False
            if self.on_reset is not None and self._known_once:
                self.on_reset()
        self._known_once = True

    def available(self) -> bool:
        """Whether the index can be used (False while its folder is refused)."""
        try:
            self.conn()
        except IndexRefused:
            return False
        return True

    def run(self, fn: Callable[[sqlite3.Connection], T], refused: T) -> T:
        """fn on this thread's connection; a corrupt database is rebuilt and fn retried once. A database
        locked by another live process is not corruption: that error propagates. While the index is
        refused (a planted link) the answer is `refused`: nothing is read or written."""
        try:
            conn = self.conn()
        except IndexRefused:
            return refused
        try:
            return fn(conn)
        except sqlite3.DatabaseError as exc:
            if is_transient(exc):  # a database locked by another live process, a full disk: not corrupt
                raise
            if conn.in_transaction:
                try:
                    conn.rollback()
                except sqlite3.Error:
                    pass
            with self.lock:
                try:
                    conn = self._rebuild(exc)
                except IndexRefused:
                    return refused
            return fn(conn)

    def transaction(self, fn: Callable[[sqlite3.Connection], None]) -> None:
        """fn in one write transaction (rolled back when it fails), run as `run` runs it."""

        def tx(c: sqlite3.Connection) -> None:
            c.execute("BEGIN IMMEDIATE")
            try:
                fn(c)
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")

        self.run(tx, None)

    def clear(self) -> None:
        """Delete the database (the next use makes a new one)."""
        with self.lock:
            self.drop_local()
            self.wipe()
