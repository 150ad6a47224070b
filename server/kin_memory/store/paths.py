"""Virtual `/memories/...` paths, the hidden folder, and which files under the root are memories.

The one place that converts between virtual paths and paths on disk. These conversions are for trusted
virtual paths (made by the store, a listing, the index); untrusted input goes through tool.guard.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .root import VIRTUAL_ROOT

if TYPE_CHECKING:
    import sqlite3

INDEX_NAME = "MEMORY.md"
INDEX_VPATH = f"{VIRTUAL_ROOT}/{INDEX_NAME}"
# The server's own folder inside the root (recall index, audit log, tool lock, reflection staging).
# Hidden, so it is never a memory and the tool's guard never reaches it.
HIDDEN_DIR = ".kin-index"
# The folder a synced store shares between machines (gitsync/): their workspaces and the conflicts on
# record. A dot-name: never read as a memory.
SYNC_DIR = ".kin-sync"
SYNC_MACHINES = "machines"  # each machine's repositories (store/workspace_aliases.py)


def in_sync_folder(root: Path | str, name: str) -> bool:
    """Whether the synced folder holds `name` (machines, conflicts): most stores are not synced, and
    their every door skips the mapping of other machines without importing it."""
    return os.path.isdir(os.path.join(root, SYNC_DIR, name))


HIDDEN_MODE = 0o700
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def relative_parts(root: Path, path: Path) -> tuple[str, ...] | None:
    """The path's components below root, or None when it is not below root."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(root)
    except ValueError:
        return None
    return rel.parts


def is_hidden(parts: tuple[str, ...]) -> bool:
    return any(p.startswith(".") for p in parts)


def is_memory_rel(parts: tuple[str, ...]) -> bool:
    """A memory file: `*.md` at any depth, no hidden component, not the root MEMORY.md."""
    if not parts or is_hidden(parts) or not parts[-1].endswith(".md"):
        return False
    return parts != (INDEX_NAME,)


def virtual_of_rel(rel: str) -> str:
    """`/memories/<rel>` for a posix path below the root; the root itself for ``""``."""
    return f"{VIRTUAL_ROOT}/{rel}" if rel else VIRTUAL_ROOT


def rel_of_virtual(vpath: str) -> str:
    """The posix path below the root that a trusted virtual path names (``""`` for the root)."""
    return vpath[len(VIRTUAL_ROOT) :].lstrip("/")


def virtual_path(root: Path, path: Path) -> str:
    parts = relative_parts(root, path)
    if parts is None:
        raise ValueError("path is outside the store")
    return str(PurePosixPath(VIRTUAL_ROOT, *parts)) if parts else VIRTUAL_ROOT


def real_path(root: Path, vpath: str) -> Path:
    """For trusted virtual paths only (listings, the index); untrusted input goes through tool.guard."""
    rel = rel_of_virtual(vpath)
    return root.joinpath(*PurePosixPath(rel).parts) if rel else root


# -- the hidden folder ------------------------------------------------------------------------------
# Everything the product writes inside the store goes to the hidden folder: the recall database, the
# audit log, the tool's lock, reflection staging. A planted `.kin-index -> /elsewhere` would send all of
# that outside the store, so the folder (and every file in it) is opened without following a link.


class HiddenRefused(OSError):
    """The hidden folder, or a file in it, is a link or not what it should be: it is not used."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.ELOOP, reason)
        self.reason = reason


def hidden_problem(root: Path | str) -> str | None:
    """Why the root's hidden folder may not be used (a link, not a folder); None when it is a real
    folder or does not exist yet."""
    try:
        st = os.lstat(os.path.join(os.fspath(root), HIDDEN_DIR))
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return f"{HIDDEN_DIR} is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return f"{HIDDEN_DIR} is not a folder"
    return None


def _open_hidden_at(root_fd: int, create: bool) -> int:
    flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
    try:
        return os.open(HIDDEN_DIR, flags, dir_fd=root_fd)
    except FileNotFoundError:
        if not create:
            raise
    made = True
    try:
        os.mkdir(HIDDEN_DIR, HIDDEN_MODE, dir_fd=root_fd)
    except FileExistsError:  # made by another process meanwhile: open what is there, with the same checks
        made = False
    fd = os.open(HIDDEN_DIR, flags, dir_fd=root_fd)
    if made:
        os.fchmod(fd, HIDDEN_MODE)  # whatever the umask
    return fd


def open_hidden_dir(root: Path | str, *, create: bool = False) -> int:
    """An fd on the root's hidden folder, never through a link (made 0700 when create and missing; the
    root itself is never made: a vanished store is not recreated by its cache).

    FileNotFoundError when it (or the root) is missing; HiddenRefused when it is a link or not a folder."""
    root_fd = os.open(os.fspath(root), os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        return _open_hidden_at(root_fd, create)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise HiddenRefused(hidden_problem(root) or f"{HIDDEN_DIR} is not a folder") from None
        raise
    finally:
        os.close(root_fd)


def open_hidden_file(dir_fd: int, name: str, flags: int, mode: int = 0o600) -> int:
    """Open a file in the hidden folder (dir_fd from open_hidden_dir): never through a link, never a
    FIFO or a device (opened non-blocking, then checked), so nothing is written or read elsewhere."""
    try:
        fd = os.open(name, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise HiddenRefused(f"{HIDDEN_DIR}/{name} is a symbolic link") from None
        if exc.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise HiddenRefused(f"{HIDDEN_DIR}/{name} is not a regular file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise HiddenRefused(f"{HIDDEN_DIR}/{name} is not a regular file")
    return fd


def hidden_file_problem(root: Path | str, name: str) -> str | None:
    """Why a path-based file in the hidden folder (the SQLite database, which SQLite opens by name) must
    not be opened: the folder or the file is a link or something other than a regular file."""
    problem = hidden_problem(root)
    if problem is not None:
        return problem
    try:
        st = os.lstat(os.path.join(os.fspath(root), HIDDEN_DIR, name))
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return f"{HIDDEN_DIR}/{name} is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return f"{HIDDEN_DIR}/{name} is not a regular file"
    return None


# The hidden folder's databases are written in write-ahead mode. SQLite reuses its log after each
# checkpoint but never shrinks the file: big write-backs with readers around grew a findings cache's
# log past 2 GB. Past a checkpoint the log is cut back to this size.
WAL_SIZE_LIMIT = 64 * 1024 * 1024  # bytes


# SQLite result codes that say "not now" (another process holds the database, the disk is full, read-only
# or failing) rather than "this is not our database": BUSY, LOCKED, NOMEM, READONLY, INTERRUPT, IOERR,
# FULL, CANTOPEN, PROTOCOL.
_TRANSIENT_CODES = frozenset({5, 6, 7, 8, 9, 10, 13, 14, 15})


def is_transient(exc: BaseException) -> bool:
    """Whether a database error is one to wait out or work around, never a reason to wipe the file: a
    second editor window's server in the middle of a long write is not corruption."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) in _TRANSIENT_CODES


def use_wal(conn: sqlite3.Connection, page_size: int | None = None) -> None:
    """Write-ahead mode, synced at checkpoints, its log kept within WAL_SIZE_LIMIT. `page_size`: the
    pages of a database not made yet (the switch makes it; a made one keeps its own)."""
    if page_size is not None:
        conn.execute(f"PRAGMA page_size={int(page_size)}")
    _switch_to_wal(conn)
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")


WAL_SWITCH_WAIT = 5.0  # seconds, as long as a connection waits for another process's lock


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    """The switch to write-ahead mode, tried again while SQLite says "busy". Two processes opening a new
    database at once (a start's workers and its findings cache) both hold a read lock and both want the
    write lock: SQLite refuses one of them at once, without waiting, to avoid a deadlock. One of the
    two refused a whole worker's cache in about one start in ten."""
    import time

    deadline = time.monotonic() + WAL_SWITCH_WAIT
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except Exception as exc:  # sqlite3.OperationalError; sqlite3 is not imported here
            code = getattr(exc, "sqlite_errorcode", None)
            if not (isinstance(code, int) and code & 0xFF == _BUSY) or time.monotonic() >= deadline:
                raise
        time.sleep(0.005)


_BUSY = 5  # SQLITE_BUSY
