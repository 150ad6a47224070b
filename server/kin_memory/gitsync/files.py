"""The store's files as a sync reads and writes them: below the root only, never through a link.

A path comes from another machine's commits, so it is checked before use: nothing is written into the
repository's own folder or the hidden folder, and every folder on the way is opened without following a
link (a planted `facts -> /elsewhere` is refused, not written through). Writes are the product's atomic
writes: a reader sees the old file or the new one, never a torn one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from ..store.atomic import DIR_MODE, create_at, fsync_dir, write_at
from ..store.paths import HIDDEN_DIR, INDEX_NAME, is_memory_rel, virtual_of_rel

READ_LIMIT = 64 * 1024 * 1024  # bytes: larger is no memory a sync brings back
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_REFUSED = {"", ".", "..", ".git", HIDDEN_DIR.lower()}


class NotAFile(Exception):
    """The path holds something a sync does not write over: a link, a folder, a device."""


def safe_rel(rel: str) -> bool:
    """A path a sync may write: relative, plain components, not in .git or the hidden folder."""
    parts = rel.split("/")
    return not rel.startswith("/") and "\0" not in rel and all(p.lower() not in _REFUSED for p in parts)


def open_parent(root: Path, rel: str, *, create: bool) -> int | None:
    """An fd on the folder holding rel (made when create); None when a folder on the way is missing.
    NotAFile when one is a link or a file."""
    fd = os.open(os.fspath(root), _DIR_FLAGS & ~_NOFOLLOW)
    try:
        for part in rel.split("/")[:-1]:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, DIR_MODE, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise NotAFile(rel) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def hooked(rel: str) -> list[str]:
    """The virtual paths history keeps versions of for a write to rel (a memory or the index)."""
    parts = tuple(rel.split("/"))
    return [virtual_of_rel(rel)] if is_memory_rel(parts) or parts == (INDEX_NAME,) else []


def name_of(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def read_at(dir_fd: int, name: str, limit: int = READ_LIMIT) -> tuple[bytes | None, os.stat_result | None]:
    """What a file holds now and the stat it was read with ((None, None): absent)."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise NotAFile(name) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotAFile(name)
        chunks = []
        while len(got := os.read(fd, 1024 * 1024)) > 0:
            chunks.append(got)
            if sum(map(len, chunks)) > limit:
                raise NotAFile(name)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read(root: Path, rel: str) -> bytes | None:
    """A file's bytes below root (None: absent or a folder on the way is missing)."""
    fd = open_parent(root, rel, create=False)
    if fd is None:
        return None
    try:
        return read_at(fd, name_of(rel))[0]
    finally:
        os.close(fd)


def put_at(dir_fd: int, name: str, data: bytes, expect: os.stat_result | None) -> None:
    """Write atomically; with expect, only over the very file that was read (atomic.Changed otherwise);
    without, only where nothing is (FileExistsError otherwise)."""
    if expect is None:
        create_at(dir_fd, name, data)
    else:
        write_at(dir_fd, name, data, expect=expect)


def drop_at(dir_fd: int, name: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dir_fd)
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


def prune_empty(root: Path, rel: str) -> None:
    """Remove the folders a deletion left empty, up to (not including) the root: git keeps no folders."""
    parts = rel.split("/")[:-1]
    while parts:
        folder = root.joinpath(*parts)
        if os.path.islink(folder):
            return
        try:
            os.rmdir(folder)
        except OSError:
            return
        fsync_dir(folder.parent)
        parts.pop()
