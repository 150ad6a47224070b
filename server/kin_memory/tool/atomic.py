"""Atomic writes: temp file in the same directory, fsync, os.replace, fsync of the directory."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def fsync_dir(path: Path | str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def make_dirs(path: Path) -> None:
    """Create every missing component of `path` with mode 0700 whatever the umask."""
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


def _write_temp(directory: Path, data: bytes, mode: int) -> str:
    fd, tmp = tempfile.mkstemp(prefix=".kin-tmp-", dir=os.fspath(directory))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_atomic(path: Path, data: bytes) -> None:
    """Replace (or create) `path` atomically; an existing file keeps its permission bits."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = FILE_MODE
    tmp = _write_temp(path.parent, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def create_exclusive(path: Path, data: bytes) -> None:
    """Create `path` with mode 0600; FileExistsError if anything is already there. Never torn."""
    tmp = _write_temp(path.parent, data, FILE_MODE)
    try:
        try:
            os.link(tmp, path)  # atomic and exclusive
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                raise FileExistsError(errno.EEXIST, "exists") from None
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fchmod(f.fileno(), FILE_MODE)
                os.fsync(f.fileno())
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    fsync_dir(path.parent)
