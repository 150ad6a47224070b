"""A server stopped and continued in the middle of a large write (job control, a debugger, a profiler)
loses no byte of what it sends: a buffered writer dropped the rest of a megabyte of diagnostics, and the
client's framing was broken for good."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

CHILD = r"""
import io, sys
from kin_memory.lsp.transport import _ClientWriter

writer = _ClientWriter(sys.stdout.buffer, lambda: None)
frames = []
for i in range(12000):
    body = b'{"n": %d, "pad": "%s"}' % (i, b"x" * (300 + i % 700))
    frames.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
for k in range(0, len(frames), 2000):  # about a megabyte each, as a worker's chunk of frames
    writer.write(b"".join(frames[k : k + 2000]))
"""


def _frames(data: bytes) -> list[int]:
    numbers, at = [], 0
    while at < len(data):
        head, sep, _ = data[at : at + 64].partition(b"\r\n\r\n")
        assert sep and head.startswith(b"Content-Length: "), f"broken framing after {len(numbers)} frames"
        length = int(head[len(b"Content-Length: ") :])
        start = at + len(head) + 4
        numbers.append(json.loads(data[start : start + length])["n"])
        at = start + length
    return numbers


def test_a_writer_stopped_and_continued_mid_write_loses_nothing() -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE)
    assert child.stdout is not None
    done = threading.Event()

    def stop_and_continue() -> None:
        while not done.is_set():
            try:
                os.kill(child.pid, signal.SIGSTOP)
                time.sleep(0.001)
                os.kill(child.pid, signal.SIGCONT)
            except ProcessLookupError:
                return
            time.sleep(0.002)

    threading.Thread(target=stop_and_continue, daemon=True).start()
    chunks = []
    try:
        while chunk := os.read(child.stdout.fileno(), 1 << 16):
            chunks.append(chunk)
            time.sleep(0.0005)  # a client that reads a little slower than the server writes
    finally:
        done.set()
        os.kill(child.pid, signal.SIGCONT)
        assert child.wait(timeout=30) == 0
    assert _frames(b"".join(chunks)) == list(range(12000))
