"""The wire to the editor, below the LSP stack: framing the input, and one writer for the output.

Nothing here imports pygls or lsprotocol: the start-up front (startup/front.py) talks to the editor with
these before the LSP stack is loaded, and the transport hands the same reader and writer to pygls after.
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

log = logging.getLogger("kin_memory.lsp")

HEADER = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
MAX_HEADER_LINE = 64 * 1024
MAX_BODY = 256 * 1024 * 1024


class Readable(Protocol):
    def readline(self, limit: int, /) -> bytes: ...

    def read(self, n: int, /) -> bytes: ...


class FdReader:
    """readline/read over a file descriptor with a private buffer (only what `frames` needs)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.eof = False

    def fill(self) -> bool:
        """One read of what is there (blocks only when nothing is); False at the end of the input."""
        return self._fill()

    def _fill(self) -> bool:
        if self.eof:
            return False
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def wait(self, deadline: float) -> bool:
        """Whether input is at hand (buffered, readable, or the end) before the monotonic deadline."""
        if self.buf or self.eof:
            return True
        remaining = deadline - time.monotonic()
        return remaining > 0 and bool(select.select([self.fd], [], [], remaining)[0])

    def holds_message(self) -> bool:
        """Whether a whole message is already buffered (the next `next_body` will not block)."""
        buf = self.buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            return False
        match = HEADER.search(buf, 0, end)
        return match is not None and len(buf) >= end + 4 + int(match.group(1))

    def readline(self, limit: int) -> bytes:
        while True:
            end = self.buf.find(b"\n", 0, limit)
            if end >= 0 or len(self.buf) >= limit:
                n = end + 1 if end >= 0 else limit
                line = bytes(self.buf[:n])
                del self.buf[:n]
                return line
            if not self._fill():
                line = bytes(self.buf)
                self.buf.clear()
                return line

    def read(self, n: int) -> bytes:
        while len(self.buf) < n and self._fill():
            pass
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data


def read_exactly(stream: Readable, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = stream.read(min(n, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def frames(stdin: Readable, stop: threading.Event | None = None,
           read: Callable[[Readable], bytes | None] | None = None) -> Iterator[bytes]:  # fmt: skip
    """Yield each framed message body (`read`, by default `next_body`: resynchronises on the next header
    after garbage). Holds no state between messages: a second generator over the same reader goes on
    where the first stopped."""
    while stop is None or not stop.is_set():
        body = (read or next_body)(stdin)
        if body is None:
            return
        yield body


def next_body(stdin: Readable) -> bytes | None:
    """The next message body, or None at the end of the input."""
    while True:
        length: int | None = None
        while True:
            line = stdin.readline(MAX_HEADER_LINE)
            if not line:
                return None
            if not line.strip():
                if length is not None:
                    break
                continue
            match = HEADER.search(line)
            if match:
                if match.start() > 0 or length is not None:
                    log.warning("skipped %d bytes of unframed input", match.start())
                length = int(match.group(1))
        if length > MAX_BODY:
            log.warning("dropped a %d-byte message: over the %d-byte limit", length, MAX_BODY)
            while length > 0:
                skipped = len(stdin.read(min(length, 1 << 20)))
                if not skipped:
                    return None
                length -= skipped
            continue
        body = read_exactly(stdin, length)
        return body if len(body) == length else None


def frame(message: dict) -> bytes:
    """A message framed for the editor (ASCII JSON, so its length in bytes is its length in characters)."""
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    """Make a pipe hold 1 MB instead of 64 KB (Linux). The writer then rarely waits on its reader, and a
    reader that is busy between reads (an editor parsing a burst of diagnostics, an interpreter waiting
    for its lock) takes a megabyte per read instead of 64 KB. Anything but a pipe is left as it is."""
    try:
        import fcntl
        import stat

        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):  # not Linux, or over the system's limit: the default size works too
        pass


class Outlet:
    """The one writer of the server's output descriptor: whole messages, one at a time, from any thread.

    Written with os.write until every byte is out: a buffered writer loses the rest of a large write when
    the process is stopped and continued in the middle of it (job control, a debugger, a profiler), and
    the editor's framing is then broken for good. Raises OSError (BrokenPipeError) once the editor left."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        widen_pipe(fd)
        self.lock = threading.Lock()
        self.token: tuple[int, int] | None = None  # while other processes write to the same output

    def send(self, data: bytes) -> None:
        with self.lock:
            token = self.token
            if token is None:
                write_all(self.fd, data)
                return
            write_in_turn(self.fd, data, token)

    def share(self, token: tuple[int, int]) -> None:
        """From now on other processes write whole messages to this output too, each while it holds the
        one byte of `token` (a pipe): so does this writer. Kept (duplicated) until `alone`."""
        with self.lock:
            self.token = (os.dup(token[0]), os.dup(token[1]))

    def alone(self) -> None:
        """The other writers are done."""
        with self.lock:
            token, self.token = self.token, None
        for fd in token or ():
            os.close(fd)


TURN = b"t"  # the byte whoever writes holds (see Outlet.share)
TURN_WAIT = 30.0  # seconds a writer waits for its turn


def new_token() -> tuple[int, int]:
    """A pipe holding the one byte of a turn: (read end, non-blocking; write end)."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.write(w, TURN)
    return r, w


def write_in_turn(fd: int, data: bytes, token: tuple[int, int]) -> None:
    """All of `data` written to `fd` while holding the turn of `token`, given back after."""
    take_turn(token)
    try:
        write_all(fd, data)
    finally:
        os.write(token[1], TURN)


def take_turn(token: tuple[int, int], wait: float = TURN_WAIT) -> None:
    """Take the byte of `token` (give it back with os.write(token[1], TURN)); TimeoutError after `wait`."""
    deadline = time.monotonic() + wait
    while True:
        try:
            if os.read(token[0], 1):
                return
        except BlockingIOError:
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no turn to write to the editor")
        select.select([token[0]], [], [], left)
