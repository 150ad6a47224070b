"""The channel between a worker and the server: framed pickles on a pipe, read against a deadline, and the server-side gathering of what each worker streams."""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the workers import no more than they need before the fork
    pass


from ....caches.frames import HEADER, read_all, read_exact, send_frame
from .records import JsonRecords, PickledRecords, ShardResult
from .snapshots import RecallSaid

log = logging.getLogger("kin_memory.lsp")


# The framing every forked checker uses, the CLI's too (caches/frames.py).
_HEADER, _send, _read_exact = HEADER, send_frame, read_exact


# (vpaths with findings, framed diagnostics, the URIs of those not named by vpath, joined by NUL as the
# worker sent them: split by whoever needs them, once the editor has every diagnostic)
OnFrames = Callable[[list[str], bytes, str], None]


OnRecords = Callable[[PickledRecords], None]  # a chunk of records checked one by one, as sent


OnRecall = Callable[["RecallSaid"], None]  # a worker's comparison of the recall index with its files


# Every worker's summary (its listing) is in, their last frames may still be on the way to the editor.
OnSummaries = Callable[[list[ShardResult]], None]


class _Incoming:
    """One worker's stream as it arrives: chunks of frames and records while it checks, then its summary
    and "end". Frames are handed on at once; records are kept as sent and become compact memories once
    every worker is done (see ShardResult.make_memories)."""

    def __init__(self, root: Path, on_frames: OnFrames | None, on_records: OnRecords | None,
                 on_recall: OnRecall | None = None) -> None:  # fmt: skip
        self.buffer = bytearray()
        self.on_recall = on_recall
        self.on_frames = on_frames
        self.on_records = on_records
        self.frames: list[bytes] = []
        self.with_findings: list[str] = []
        self.made = ShardResult([], [], 0, prefix=str(root))  # what is made before the summary comes
        self.result: ShardResult | None = None
        self.done = False

    @property
    def unmade(self) -> ShardResult:
        return self.result or self.made

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= _HEADER.size:
            (length,) = _HEADER.unpack_from(self.buffer)
            if len(self.buffer) < _HEADER.size + length:
                return
            payload = bytes(self.buffer[_HEADER.size : _HEADER.size + length])
            del self.buffer[: _HEADER.size + length]
            self.take(*pickle.loads(payload))

    def take(self, kind: str, chunk: Any) -> None:
        if self.done:
            raise EOFError("worker sent more after its end")
        if kind == "frames":
            vpaths: list[str] = chunk[0]
            frames: bytes = chunk[1]
            if self.on_frames is not None:
                self.on_frames(vpaths, frames, "")
            else:
                self.with_findings += vpaths
                self.frames.append(frames)
        elif kind == "records":
            if self.on_records is not None:
                self.on_records(chunk)
            self.unmade.records.append(chunk)
        elif kind == "segment":  # its records are read from the cache when adopted (see JsonRecords)
            names, uris, frames, (variant, seg, listing), skip = chunk
            if self.on_frames is not None:
                self.on_frames([], frames, uris)
            else:
                self.frames.append(frames)
            snapshot = (self.made.prefix, variant, seg, listing)
            self.unmade.records.append(JsonRecords(names, snapshot, frozenset(skip)))
        elif kind == "recall":
            if self.on_recall is not None:
                self.on_recall(chunk)
        elif kind == "summary" and isinstance(chunk, ShardResult):
            chunk.prefix = self.made.prefix
            chunk.memories, chunk.records = self.made.memories, self.made.records
            self.result = chunk
        elif kind == "end" and self.result is not None:
            self.done = True
            self.result.with_findings = self.with_findings
            self.result.frames = self.frames
        else:
            raise EOFError("worker sent an unexpected chunk")


def _gather(
    fds: list[int],
    deadline: float,
    root: Path,
    on_frames: OnFrames | None = None,
    on_records: OnRecords | None = None,
    on_recall: OnRecall | None = None,
    on_summaries: OnSummaries | None = None,
) -> list[ShardResult]:
    """Every worker's result, read from all of them at once: a worker streams while it checks, and one
    left unread would stall on a full pipe. The records are kept as sent, made memories by whoever adopts
    them (ShardResult.make_memories) once every worker is done. `on_summaries` is called once, as soon
    as every worker's summary is in (before their "end")."""
    incoming = {fd: _Incoming(root, on_frames, on_records, on_recall) for fd in fds}
    summaries = on_summaries
    # A worker's pipe is done with at its "end" chunk: it writes the findings cache after that.
    for fd, data in read_all(fds, deadline, done=lambda fd: incoming[fd].done):
        if not data:
            raise EOFError("worker exited early")
        incoming[fd].feed(data)
        if summaries is not None and all(i.result is not None for i in incoming.values()):
            summaries, heard = None, summaries
            heard([incoming[fd].result for fd in fds])  # type: ignore[misc]
    return [incoming[fd].result for fd in fds]  # type: ignore[misc]


class _ToServer:
    """A worker's chunks to the server; once the server asked for it (`asked`), the frames of each chunk
    go straight to the editor, one worker at a time, and the chunk follows without them.

    The editor's frames are written by a thread of their own, in the order given: the worker goes on
    checking while the editor reads (its writes wait on the editor and on the turn), so its summary
    reaches the server while the frames are still going out, and MEMORY.md's diagnostics, which need
    every worker's listing, are made meanwhile. `drain` waits for the last of them; "end" follows."""

    def __init__(self, res_fd: int, editor: int, token: tuple[int, int]) -> None:
        self.res_fd, self.editor, self.token = res_fd, editor, token
        self.direct = False
        self.writer: _EditorWriter | None = None

    def asked(self, request: tuple) -> None:
        self.direct = len(request) > 2 and request[2] is True

    def __call__(self, chunk: tuple[str, object]) -> None:
        kind, body = chunk
        if self.direct and kind in ("frames", "segment"):
            parts = list(body)  # type: ignore[call-overload]
            at = 1 if kind == "frames" else 2  # where the frames are in the chunk
            if parts[at]:
                self._to_editor(parts[at])
                parts[at] = b""
            chunk = (kind, tuple(parts))
        _send(self.res_fd, pickle.dumps(chunk))

    def _to_editor(self, frames: bytes) -> None:
        if self.writer is None:
            self.writer = _EditorWriter(self.editor, self.token)
        self.writer.put(frames)

    def drain(self) -> None:
        """Every frame given is written to the editor (OSError or TimeoutError if one could not be)."""
        if self.writer is not None:
            self.writer.drain()

    def close(self) -> None:
        for fd in (self.res_fd, self.editor, *self.token):
            os.close(fd)


class _EditorWriter:
    """Frames written to the editor in order on a thread, each while holding the turn (wire.write_in_turn)."""

    def __init__(self, editor: int, token: tuple[int, int]) -> None:
        import queue
        import threading

        self.editor, self.token = editor, token
        self.queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.failed: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="kin-memory-to-editor", daemon=True)
        self.thread.start()

    def put(self, frames: bytes) -> None:
        if self.failed is not None:
            raise self.failed
        self.queue.put(frames)

    def drain(self) -> None:
        self.queue.put(None)
        self.thread.join()
        if self.failed is not None:
            raise self.failed

    def _run(self) -> None:
        from ...wire import write_in_turn

        while (frames := self.queue.get()) is not None:
            if self.failed is not None:
                continue  # the worker learns of it at its next put or at drain
            try:
                write_in_turn(self.editor, frames, self.token)
            except BaseException as exc:  # noqa: BLE001 - handed to the worker's own thread
                self.failed = exc


Chunks = Callable[[], Iterator[tuple[str, object]]]


Send = Callable[[tuple[str, object]], None]
