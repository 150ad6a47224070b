"""One bounded reader for files a repository or an agent can plant (settings files, transcripts, memory
bodies read by the tool).

Such a file may be a link to `/dev/zero`, a FIFO nobody writes to, `/dev/stdin` (the language server's
own pipe), a folder, or a sparse file of hundreds of megabytes. Reading it the ordinary way hangs the
caller or exhausts its memory. Here every read:

- refuses a link out of its allowed folder (`within`): the realpath must stay inside it, the final
  component is opened with O_NOFOLLOW, and the opened file's real path is checked again;
- checks the object is a regular file before reading anything (stat before opening, so a device is
  never even opened, and fstat after, so a swap in between is caught);
- never blocks: the open is O_NONBLOCK, so a FIFO planted after the stat opens at once and is refused;
- reads at most `limit` bytes: beyond that it refuses, naming the size, or keeps the head (`truncate`).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
CHUNK = 1 << 20


class Refused(Exception):
    """The file is not read: `reason` says why in a few words ("not a regular file (a FIFO)")."""

    def __init__(self, reason: str, *, kind: str, size: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind  # "outside", "not-regular", "folder" or "too-large"
        self.size = size  # the file's size, for "too-large"


@dataclass(frozen=True)
class Bounded:
    data: bytes
    size: int  # the file's size on disk when it was opened
    truncated: bool  # only the first `limit` bytes were read (truncate mode)
    st: os.stat_result


def describe_size(n: int) -> str:
    """A size for a message: "300 MB", "70 KB", "12 bytes"."""
    if n >= 1024 * 1024:
        return f"{n // (1024 * 1024)} MB"
    if n >= 1024:
        return f"{n // 1024} KB"
    return f"{n} bytes"


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def check_regular(st: os.stat_result) -> None:
    """Refused unless st describes a regular file."""
    if stat.S_ISREG(st.st_mode):
        return
    kind = "folder" if stat.S_ISDIR(st.st_mode) else "not-regular"
    raise Refused(f"not a regular file ({_kind_of(st.st_mode)})", kind=kind)


def _too_large(size: int, limit: int) -> Refused:
    return Refused(f"over {describe_size(limit)} ({describe_size(size)})", kind="too-large", size=size)


def read_fd(fd: int, limit: int, *, truncate: bool = False) -> Bounded:
    """Read an open file: regular files only, at most `limit` bytes (more is refused, or cut off with
    truncate). The size on disk is checked first, then the read itself stops at limit + 1 bytes: a file
    that grows meanwhile, or a /proc file that reports size 0, is bounded all the same."""
    st = os.fstat(fd)
    check_regular(st)
    if st.st_size > limit and not truncate:
        raise _too_large(st.st_size, limit)
    want = limit + 1  # one byte more than allowed tells "exactly at the limit" from "over it"
    chunks: list[bytes] = []
    got = 0
    while got < want:
        chunk = os.read(fd, min(CHUNK, want - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        if not truncate:
            raise _too_large(max(st.st_size, len(data)), limit)
        return Bounded(data[:limit], max(st.st_size, len(data)), True, st)
    return Bounded(data, st.st_size, False, st)


def _inside(real: str, folder_real: str) -> bool:
    return real == folder_real or real.startswith(folder_real.rstrip(os.sep) + os.sep)


def _opened_path(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _resolve(path: Path, within: Path | None) -> str:
    """The path to open: the realpath checked against `within` (a link inside it is followed), or the
    path itself when any place is allowed."""
    if within is None:
        return os.fspath(path)
    real = os.path.realpath(path)
    if not _inside(real, os.path.realpath(within)):
        if not os.path.lexists(path):
            raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
        raise Refused("a link pointing outside its folder", kind="outside")
    return real


def read_file(path: Path, limit: int, *, within: Path | None = None, truncate: bool = False) -> Bounded:
    """Read a file that someone else may have planted. Raises Refused (with the reason) or OSError
    (FileNotFoundError when it does not exist); never blocks, never reads more than limit + 1 bytes."""
    target = _resolve(path, within)
    check_regular(os.stat(target))  # a device or a FIFO is refused before it is even opened
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (_NOFOLLOW if within is not None else 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if within is not None and exc.errno == errno.ELOOP:  # made a link after the realpath was taken
            raise Refused("a link pointing outside its folder", kind="outside") from None
        raise
    try:
        if within is not None:
            opened = _opened_path(fd)
            if (
                opened is not None
                and opened.startswith("/")
                and not _inside(opened, os.path.realpath(within))
            ):
                raise Refused("a link pointing outside its folder", kind="outside")
        return read_fd(fd, limit, truncate=truncate)
    finally:
        os.close(fd)


def read_file_tail(path: Path, limit: int) -> Bounded:
    """Read the END of a file someone else may have planted (a session log grows at its end, where the
    newest turns are): the same refusals as read_file (regular files only, checked before and after the
    open, which never blocks), then at most the last `limit` bytes. `truncated` says the head was not
    read; `size - len(data)` is how much of it."""
    target = os.fspath(path)
    check_regular(os.stat(target))
    fd = os.open(target, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    try:
        st = os.fstat(fd)
        check_regular(st)
        start = max(0, st.st_size - limit)
        if start:
            os.lseek(fd, start, os.SEEK_SET)
        chunks: list[bytes] = []
        got = 0
        while got < limit:  # bounded even when the file grows meanwhile or reports size 0
            chunk = os.read(fd, min(CHUNK, limit - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        data = b"".join(chunks)
        return Bounded(data, max(st.st_size, start + len(data)), start > 0, st)
    finally:
        os.close(fd)
