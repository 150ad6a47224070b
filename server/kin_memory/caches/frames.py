"""Frames on a pipe between a forked checker and its parent: a length, then the bytes. The one framing
of every forked checker, the CLI's and the server's start-up workers'. A message of megabytes is left in
a nameless file in memory instead, its size told on the pipe (leave, read_left)."""

from __future__ import annotations

import os
import select
import struct
import time
from collections.abc import Callable, Iterator

HEADER = struct.Struct("!Q")  # a frame: its length, then its bytes
# The marshal format of what forked processes send each other: version 2 keeps no table of the objects
# already written (3 and later do, to share them), which none of these messages needs. A split check's
# 5,000 new entries: 5.8 → 2.4 ms to write, 2.5 → 1.7 ms to read.
MARSHAL_VERSION = 2


def send_frame(fd: int, payload: bytes) -> None:
    view = memoryview(HEADER.pack(len(payload)) + payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def ready(fds: list[int], deadline: float) -> list[int]:
    """The pipes among `fds` with something to read (or their end), waiting until `deadline` at most."""
    wait = deadline - time.monotonic()
    found = select.select(fds, [], [], wait)[0] if wait > 0 else []
    if not found:
        raise TimeoutError("worker did not answer in time")
    return found


def read_exact(fd: int, n: int, deadline: float) -> bytes:
    chunks, remaining = [], n
    while remaining:
        ready([fd], deadline)
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError("worker exited early")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_all(
    fds: list[int], deadline: float, done: Callable[[int], bool] = lambda fd: False
) -> Iterator[tuple[int, bytes]]:
    """(fd, chunk) from every worker's pipe at once, as it comes (one left unread would stall its worker
    on a full pipe), until each pipe ends (b"" once) or `done(fd)` says, after its chunk was handled,
    that nothing more is wanted from it."""
    open_fds = list(fds)
    while open_fds:
        for fd in ready(open_fds, deadline):
            data = os.read(fd, 1 << 20)
            yield fd, data
            if not data or done(fd):
                open_fds.remove(fd)


def scratch_file() -> int:
    """A file in memory, nameless, for one process to leave a message in for another (a pipe holds 64 KB:
    megabytes sent through one wait for the reader, who may read only once its own work is done)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("kin-memory-message", getattr(os, "MFD_CLOEXEC", 0))
    import tempfile

    with tempfile.TemporaryFile() as f:  # already unlinked where it can be
        return os.dup(f.fileno())


def leave(signal: int, scratch: int, parts: list[bytes]) -> None:
    """A message's parts written to the scratch file, then its size (see HEADER) on the pipe: the reader
    reads the file once it is told (read_left)."""
    from ..store.atomic import write_parts

    write_parts(scratch, parts)
    os.write(signal, HEADER.pack(sum(map(len, parts))))


def read_left(scratch: int, size: int) -> memoryview:
    """The `size` bytes left in a scratch file, read in place into a buffer of that size."""
    body = memoryview(bytearray(size))
    filled = 0
    while filled < size:
        got = os.preadv(scratch, [body[filled:]], filled)
        if not got:
            raise EOFError("message cut short")
        filled += got
    return body
