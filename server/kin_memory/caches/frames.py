"""Frames on a pipe between a forked checker and its parent: a length, then the bytes. The one framing
of every forked checker, the CLI's and the server's start-up workers'."""

from __future__ import annotations

import os
import select
import struct
import time
from collections.abc import Callable, Iterator

HEADER = struct.Struct("!Q")  # a frame: its length, then its bytes


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
