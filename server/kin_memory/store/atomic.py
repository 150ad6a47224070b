"""Atomic writes relative to a directory fd: temp file in the same directory, fsync, rename, fsync the dir.

Nothing is ever rewritten in place: a reader (or a hard-linked staging copy of the store) sees the old
inode or the new one, never a torn or empty file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
TEMP_PREFIX = ".kin-tmp-"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC


def fsync_dir(path: Path | str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _fsync_fd(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(fd)


def make_dirs(path: Path) -> None:
    """Create every missing component of `path` with mode 0700 whatever the umask (trusted paths only)."""
    missing: list[Path] = []
    p = path
    while not os.path.lexists(p):
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(d, DIR_MODE)
        fsync_dir(d.parent)


def _write_temp(dir_fd: int, data: bytes | Sequence[bytes], mode: int, durable: bool = True) -> str:
    # A random name, as secrets.token_hex makes it, without that module's imports (random, hmac, base64).
    name = TEMP_PREFIX + os.urandom(8).hex()
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, FILE_MODE, dir_fd=dir_fd)
    try:
        write_parts(fd, [data] if isinstance(data, (bytes, bytearray, memoryview)) else data)
        os.fchmod(fd, mode)
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise
    os.close(fd)
    return name


_IOV_MAX = 1024  # buffers per writev call (Linux's IOV_MAX; POSIX guarantees at least 16 and 1024 is common)


def write_parts(fd: int, parts: Sequence[bytes | bytearray | memoryview]) -> None:
    """Every byte of `parts`, in order, many parts per system call: a file made of many pieces (a check
    summary at 100k memories is 200,000 of them, 40 MB) is written without joining them into one copy
    first."""
    for start in range(0, len(parts), _IOV_MAX):
        views = [memoryview(p) for p in parts[start : start + _IOV_MAX] if len(p)]
        at = 0
        while at < len(views):
            written = os.writev(fd, views[at:]) if len(views) - at > 1 else os.write(fd, views[at])
            while at < len(views) and written >= len(views[at]):
                written -= len(views[at])
                at += 1
            if written:
                views[at] = views[at][written:]


class Changed(Exception):
    """The target changed while the new version was being written: nothing was replaced."""


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def write_at(
    dir_fd: int,
    name: str,
    data: bytes | Sequence[bytes],
    expect: os.stat_result | None = None,
    durable: bool = True,
) -> None:
    """Replace (or create) `name` atomically; an existing file keeps its permission bits. With expect,
    the target is checked again right before the rename (after the slow fsync of the new version), so
    a writer that changed it meanwhile is reported (Changed), not overwritten. `durable` False: nothing
    is synced to the disk (a cache, which may lose its last writes when the machine stops, never a
    torn file). `data` may come in parts, written one after the other."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else FILE_MODE
    except FileNotFoundError:
        mode = FILE_MODE
    tmp = _write_temp(dir_fd, data, mode, durable)
    try:
        if expect is not None:
            try:
                now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                raise Changed(name) from None
            if _identity(now) != _identity(expect):
                raise Changed(name)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    if durable:
        _fsync_fd(dir_fd)


def create_at(dir_fd: int, name: str, data: bytes) -> None:
    """Create `name` with mode 0600; FileExistsError if anything is already there. Never torn."""
    tmp = _write_temp(dir_fd, data, FILE_MODE)
    try:
        try:
            os.link(
                tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False
            )  # atomic, exclusive
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                raise FileExistsError(errno.EEXIST, "exists") from None
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
            # no hard links here: exclusive open, then write (still never overwrites anything)
            fd = os.open(
                name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, FILE_MODE, dir_fd=dir_fd
            )
            try:
                os.write(fd, data)
                os.fchmod(fd, FILE_MODE)
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
    _fsync_fd(dir_fd)


def remove_at(dir_fd: int, name: str) -> None:
    """Delete a file, a link (not its target) or a whole directory tree, never leaving `dir_fd`'s subtree."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISDIR(st.st_mode):
        _remove_tree(dir_fd, name, st)
    else:
        os.unlink(name, dir_fd=dir_fd)
    _fsync_fd(dir_fd)


def _ident(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _open_same_dir(dir_fd: int, name: str, st: os.stat_result) -> int:
    """Open the folder `name` that was just stat'ed as st; O_NOFOLLOW: a link swapped in is refused,
    and a different folder swapped in reads as gone."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    if _ident(os.fstat(fd)) != _ident(st):
        os.close(fd)
        raise FileNotFoundError(errno.ENOENT, "replaced")
    return fd


def _clear_files(fd: int) -> list[str]:
    """Unlink every non-folder entry of the folder open at fd; the names of its folders."""
    folders = []
    for child in os.listdir(fd):
        try:
            cst = os.stat(child, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(cst.st_mode):
            folders.append(child)
        else:
            os.unlink(child, dir_fd=fd)
    return folders


class _Level:
    """One folder on the way down: its name in its parent, its identity, the subfolders left to do."""

    def __init__(self, name: str, ident: tuple[int, int], todo: list[str]) -> None:
        self.name, self.ident, self.todo = name, ident, todo


def _remove_tree(top_fd: int, name: str, st: os.stat_result) -> None:
    """Depth first with an explicit stack (a tree can be deeper than the recursion limit) and one folder
    open at a time (deeper than the open-file limit too): the way back up is `..`, accepted only when it
    is the very folder we came down from, so a folder moved away meanwhile is never left for elsewhere."""
    fd = _open_same_dir(top_fd, name, st)
    try:
        path = [_Level(name, _ident(st), _clear_files(fd))]
        while True:
            level = path[-1]
            if level.todo:
                child = level.todo.pop()
                try:
                    cst = os.stat(child, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if not stat.S_ISDIR(cst.st_mode):  # replaced by a file meanwhile
                    os.unlink(child, dir_fd=fd)
                    continue
                child_fd = _open_same_dir(fd, child, cst)
                os.close(fd)
                fd = child_fd
                path.append(_Level(child, _ident(cst), _clear_files(fd)))
                continue
            path.pop()
            if not path:
                break
            parent_fd = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent_fd
            if _ident(os.fstat(fd)) != path[-1].ident:
                raise FileNotFoundError(errno.ENOENT, "moved")
            os.rmdir(level.name, dir_fd=fd)
        _fsync_fd(fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=top_fd)


def rename_at(src_fd: int, src: str, dst_fd: int, dst: str) -> None:
    """Move an entry without replacing anything at the destination (FileExistsError if taken)."""
    st = os.stat(src, dir_fd=src_fd, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        try:  # link + unlink: an atomic no-replace move for files and links
            os.link(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                raise FileExistsError(errno.EEXIST, "exists") from None
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
                raise
        else:
            os.unlink(src, dir_fd=src_fd)
            _fsync_fd(dst_fd)
            _fsync_fd(src_fd)
            return
    try:
        os.stat(dst, dir_fd=dst_fd, follow_symlinks=False)
        raise FileExistsError(errno.EEXIST, "exists")
    except FileNotFoundError:
        pass
    os.rename(src, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
    _fsync_fd(dst_fd)
    _fsync_fd(src_fd)
