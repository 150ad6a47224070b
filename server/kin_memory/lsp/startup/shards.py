"""Cold-start shards: the store is read and parsed by forked workers while the LSP stack imports.

Importing pygls/lsprotocol takes about a third of a second of pure CPU, and a big store takes seconds
to parse on one core. `kin-memory serve` therefore forks one worker per core *before* it imports the
LSP stack (no threads exist yet, so forking is safe). Each worker scans the store, keeps every Nth
file, reads and parses it, then waits for the session's check context (known only after `initialize`
and `workspace/configuration`), checks its files and sends back framed publishDiagnostics bytes, its
share of the prompt-block listing and the freshness key it saw per file.

The server uses the shards only when they were started for the root it ends up serving; otherwise,
or when a worker fails, it checks in-process as before. The workers hold no state the server needs
later: the server loads its own Store afterwards, off the critical path, and rechecks any file whose
freshness key moved in between (store/freshness.py).
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import select
import signal
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...store.freshness import Seen

if TYPE_CHECKING:  # the workers import no more than they need before the fork
    from ...caches.checked import Checked
    from ...caches.findings import SnapshotRecords
    from ...caches.segments import Snapshot
    from ...store.context import Context
    from ...store.memory import Memory, Record

log = logging.getLogger("kin_memory.lsp")

MAX_WORKERS = 4
ONE_WORKER_HITS = 30_000  # cache entries one worker answers in about the time the server takes to start
WRITE_BACK_GRACE = 60.0  # seconds a worker may take to write the findings cache after answering
_HEADER = struct.Struct("!Q")
POSITION_ENCODINGS = ("utf-16", "utf-8", "utf-32")


class _Named:
    """A chunk of records named by its files' vpaths, joined by NUL (which no file name holds): one
    string is sent and read at a fraction of the cost of a tuple per file, and split only when needed."""

    names: str

    @property
    def vpaths(self) -> list[str]:
        return self.names.split("\0") if self.names else []

    def __len__(self) -> int:
        return self.names.count("\0") + 1 if self.names else 0


@dataclass
class PickledRecords(_Named):
    """Records of files checked one by one, as the worker pickled them: about 140 bytes a file until they
    are made memories once every worker is done (a compact memory is four times that, and the server's
    memory peaks while the workers run)."""

    names: str
    blob: bytes

    @classmethod
    def of(cls, records: list[tuple[str, float, int, int, Any]]) -> PickledRecords:
        return cls("\0".join(vpath for vpath, *_ in records), pickle.dumps(records, pickle.HIGHEST_PROTOCOL))

    def decoded(self) -> list[tuple[str, float, int, int, Any]]:
        return pickle.loads(self.blob)


@dataclass
class JsonRecords(_Named):
    """A segment snapshot's records, read from the findings cache and decoded only when they are made
    memories: what the server needs first from a warm start is the diagnostics, not the records (which
    the worker therefore neither reads nor sends)."""

    names: str  # the files it answers for (see _Named)
    snapshot: tuple[str, str, int, bytes]  # (store root, variant, segment, listing digest)
    skip: frozenset[str] = frozenset()  # files of the snapshot checked again (sent on their own)

    def decoded(self, kept: SnapshotRecords) -> list[tuple[str, float, int, int, Any]]:
        """Each file's (vpath, mtime, size, key, record); the record None (the file is read again) when the
        snapshot is not there any more or does not hold the file. The worker sent the segment because
        the snapshot's listing digest was that of the files' (vpath, freshness key) on disk: its own
        (mtime, size, key) are theirs."""
        vpaths = self.vpaths
        _, variant, seg, listing = self.snapshot
        text = kept.get(variant, seg, listing)
        rows = json.loads(text) if text is not None else []
        if not isinstance(rows, list):
            raise ValueError("a snapshot's records are not a list")
        by_vpath = {
            row[0]: row
            for row in rows
            if isinstance(row, list) and len(row) == 5 and isinstance(row[0], str) and row[0] not in self.skip
        }
        out: list[tuple[str, float, int, int, Any]] = []
        for vpath in vpaths:
            row = by_vpath.get(vpath)
            if (
                row is not None
                and isinstance(row[1], (int, float))
                and isinstance(row[2], int)
                and isinstance(row[3], int)
            ):
                out.append((vpath, row[1], row[2], row[3], row[4]))
            else:
                out.append((vpath, 0.0, 0, 0, None))
        return out


@dataclass
class ShardResult:
    with_findings: list[str]
    listed: list[tuple[str, str]]
    hidden: int
    index_vpath: str | None = None
    problems: list = field(default_factory=list)  # the scan's problems (from the first worker only)
    hits: int = 0  # files answered by the findings cache
    # How the recall index compares with the shard's files: (files it holds as they are, files it lacks
    # or holds with another freshness key, the first RECALL_KEEP of those); None when it could not be read.
    recall: tuple[int, int, list[str]] | None = None
    # Sent in chunks after the above and gathered by the parent as they arrive (see _Incoming):
    frames: list[bytes] = field(default_factory=list)  # framed publishDiagnostics
    memories: dict[str, Memory | None] = field(default_factory=dict)  # compact; None: read it again
    records: list[PickledRecords | JsonRecords] = field(default_factory=list)  # not made memories yet
    prefix: str = ""  # the store's root, which a record's vpath is below

    def count(self) -> int:
        return len(self.memories) + sum(len(chunk) for chunk in self.records)

    def vpaths(self) -> set[str]:
        """Every file of the shard, made a memory or not yet."""
        found = set(self.memories)
        for chunk in self.records:
            found.update(chunk.vpaths)
        return found

    def make_memories(self) -> None:
        """The records made compact memories."""
        from ...caches.findings import SnapshotRecords
        from ...store.memory import from_record

        prefix, memories = self.prefix, self.memories
        kept = SnapshotRecords(Path(prefix))
        try:
            while self.records:
                chunk = self.records.pop(0)
                rows = chunk.decoded(kept) if isinstance(chunk, JsonRecords) else chunk.decoded()
                for vpath, mtime, size, key, record in rows:
                    path = prefix + vpath[len("/memories") :]
                    memories[vpath] = (
                        from_record(path, vpath, mtime, size, record, key) if record is not None else None
                    )
        finally:
            kept.close()


@dataclass
class Shards:
    root: Path
    pids: list[int] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)  # write ends: parent -> worker
    results: list[int] = field(default_factory=list)  # read ends: worker -> parent
    token: tuple[int, int] | None = None  # the turn to write to the editor (see wire.Outlet.share)

    @classmethod
    def start(cls, root: Path, workers: int | None = None, guess: Context | None = None) -> Shards | None:
        """Fork the workers; None when the store is missing or forking is unavailable."""
        if not hasattr(os, "fork") or not root.is_dir():
            return None
        from ..wire import new_token, widen_pipe

        count = workers or _default_workers(root, guess)
        shards = cls(root)
        token = shards.token = new_token()
        for index in range(count):
            req_r, req_w = os.pipe()
            res_r, res_w = os.pipe()
            widen_pipe(res_w)
            pid = os.fork()
            if pid == 0:  # the worker
                os.close(req_w)
                os.close(res_r)
                for fd in (*shards.requests, *shards.results):
                    os.close(fd)
                _worker_main(root, index, count, req_r, res_w, guess, token)  # never returns
            os.close(req_r)
            os.close(res_w)
            shards.pids.append(pid)
            shards.requests.append(req_w)
            shards.results.append(res_r)
        return shards

    def collect(
        self,
        ctx: object,
        encoding: str,
        timeout: float = 120.0,
        on_frames: OnFrames | None = None,
        on_records: OnRecords | None = None,
        make: bool = True,
        direct: bool = False,
        on_recall: OnRecall | None = None,
    ) -> list[ShardResult] | None:
        """Send the check context, gather every worker's result; None if any worker fails. With
        `on_frames`, each worker's diagnostics are handed over as they arrive (its files with findings
        first, then chunks of frames) instead of kept in its result; with `on_records`, each chunk of
        records as it arrives. `make` False: the records not made memories yet are left to the caller
        (ShardResult.make_memories). `direct`: the workers write their diagnostics to the editor
        themselves (the server's output is the editor's and nothing else writes to it until they are
        done); what comes to the server then has the frames left out. `on_recall` hears each worker's
        comparison of the recall index with its files (RecallSaid), told before its files are sent."""
        request = pickle.dumps((ctx, encoding, direct))
        try:
            for fd in self.requests:
                _send(fd, request)
            results = _gather(
                self.results, time.monotonic() + timeout, self.root, on_frames, on_records, on_recall
            )
            for r in results if make else ():
                r.make_memories()
        except (OSError, EOFError, pickle.UnpicklingError, TimeoutError) as exc:
            log.warning("cold-start workers failed (%s): checking in-process", exc)
            results = None
        self.close(grace=WRITE_BACK_GRACE if results is not None else 0.0)
        return results

    def close(self, grace: float = 0.0) -> None:
        """Let the workers go. With a grace period they finish writing the findings cache first (waited
        for on a thread, never by the caller), and are killed only if they outstay it."""
        for fd in (*self.requests, *self.results, *(self.token or ())):
            try:
                os.close(fd)
            except OSError:
                pass
        self.requests, self.results, self.token = [], [], None
        pids, self.pids = self.pids, []
        if grace > 0:
            threading.Thread(target=_reap, args=(pids, grace), name="kin-memory-workers", daemon=True).start()
        else:
            _reap(pids, 0.0)


def _reap(pids: list[int], grace: float) -> None:
    deadline = time.monotonic() + grace
    waiting = list(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except OSError:
                done = pid
            if done:
                waiting.remove(pid)
        if waiting:
            time.sleep(0.05)
    for pid in waiting:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass


def _default_workers(root: Path, guess: Context | None = None) -> int:
    """With a findings cache this code wrote for the guessed context (a warm restart) of a store up to
    ONE_WORKER_HITS files, one worker: it mostly stats files, and more would take cores from the
    server's own start (importing the LSP stack) for little. Otherwise one worker per core (at most
    4): the whole store is read and checked, or a big one looked up. Small stores cost the workers a
    few milliseconds; estimating the store's size first would cost the parent a scan on the critical
    path."""
    from ...caches.findings import entries_of_this_code, variant_key

    # The client's position encoding is not known yet: any of them.
    variants = None if guess is None else [variant_key(guess, f"lsp-{e}") for e in POSITION_ENCODINGS]
    if 0 < entries_of_this_code(root, variants) < ONE_WORKER_HITS:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_WORKERS))


def _send(fd: int, payload: bytes) -> None:
    data = _HEADER.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, n: int, deadline: float) -> bytes:
    chunks, remaining = [], n
    while remaining:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            raise TimeoutError("worker did not answer in time")
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError("worker exited early")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


# (vpaths with findings, framed diagnostics, the URIs of those not named by vpath)
OnFrames = Callable[[list[str], bytes, list[str]], None]


OnRecords = Callable[[PickledRecords], None]  # a chunk of records checked one by one, as sent
OnRecall = Callable[["RecallSaid"], None]  # a worker's comparison of the recall index with its files


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
                self.on_frames(vpaths, frames, [])
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
                self.on_frames([], frames, uris.split("\0") if uris else [])
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
) -> list[ShardResult]:
    """Every worker's result, read from all of them at once: a worker streams while it checks, and one
    left unread would stall on a full pipe. The records are kept as sent, made memories by whoever adopts
    them (ShardResult.make_memories) once every worker is done."""
    incoming = {fd: _Incoming(root, on_frames, on_records, on_recall) for fd in fds}
    open_fds = list(fds)
    while open_fds:
        wait = deadline - time.monotonic()
        ready = select.select(open_fds, [], [], wait)[0] if wait > 0 else []
        if not ready:
            raise TimeoutError("worker did not answer in time")
        for fd in ready:
            data = os.read(fd, 1 << 20)
            if not data:
                raise EOFError("worker exited early")
            incoming[fd].feed(data)
            if incoming[fd].done:
                open_fds.remove(fd)
    return [incoming[fd].result for fd in fds]  # type: ignore[misc]


def _worker_main(
    root: Path,
    index: int,
    count: int,
    req_fd: int,
    res_fd: int,
    guess: Context | None,
    token: tuple[int, int],
) -> None:
    code = 0
    try:
        # Let go of the editor's pipes at once: the client must see EOF when the server exits. The
        # output is kept aside, for diagnostics written straight to the editor when the server asks.
        editor = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

        out = _ToServer(res_fd, editor, token)
        result, chunks, done = _work(root, index, count, req_fd, guess, out, out.asked)
        for chunk in chunks():  # what was not streamed while checking
            out(chunk)
        out(("summary", result))
        out(("end", None))
        out.close()
        del result, chunks  # sent: not kept through the write-back
        done()  # the findings cache is written after the server has what it waits for
    except BaseException:  # noqa: BLE001 - the parent falls back to checking in-process
        code = 1
    os._exit(code)


class _ToServer:
    """A worker's chunks to the server; once the server asked for it (`asked`), the frames of each chunk
    go straight to the editor first, one worker at a time, and the chunk follows without them."""

    def __init__(self, res_fd: int, editor: int, token: tuple[int, int]) -> None:
        self.res_fd, self.editor, self.token = res_fd, editor, token
        self.direct = False

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
        from ..wire import TURN, take_turn, write_all

        take_turn(self.token)
        try:
            write_all(self.editor, frames)
        finally:
            os.write(self.token[1], TURN)

    def close(self) -> None:
        for fd in (self.res_fd, self.editor, *self.token):
            os.close(fd)


Chunks = Callable[[], Iterator[tuple[str, object]]]


Send = Callable[[tuple[str, object]], None]


def _work(
    root: Path, index: int, count: int, req_fd: int, guess: Context | None, send: Send,
    asked: Callable[[tuple], None] = lambda request: None,
) -> tuple[ShardResult, Chunks, Callable[[], None]]:  # fmt: skip
    cache, (mine, index_vpath, problems), keep_listing = _files_of_shard(root, index, count)
    request: list = []
    confirmed: list[bool] = []  # set once the check running is known to be the one the server wants
    tell = _once(lambda said: send(("recall", said)))  # the same whatever the check's context

    def real_context_differs() -> bool:
        """Polled during the speculative check: once the server's context arrives and differs, the
        guess is abandoned at once instead of finished for nothing; once it arrives and agrees, what
        is checked is streamed to the server from then on."""
        if not request:
            if not select.select([req_fd], [], [], 0)[0]:
                return False
            request.append(_read_request(req_fd))
            asked(request[0])
        ctx, encoding = request[0][:2]
        differs = not (encoding == "utf-16" and guess is not None and same_check(guess, ctx))
        if not differs:
            confirmed.append(True)
        return differs

    def check(ctx, encoding: str, abandon=None) -> tuple[ShardResult, Chunks, Callable[[], None]] | None:
        # Until confirmed, a speculative check keeps what it found (its guess may be the wrong one).
        def stream(chunk: tuple[str, object]) -> bool:
            if abandon is not None and not confirmed:
                return False
            send(chunk)
            return True

        checked = _check(root, mine, ctx, encoding, (index, count), cache, abandon, stream, tell)
        if checked is None:
            return None
        result, chunks, write_back = checked
        result.index_vpath = index_vpath
        result.problems = problems if index == 0 else []

        def done() -> None:
            write_back()
            keep_listing()

        return result, chunks, done

    # Most sessions check with the default context: compute it while the server is still starting.
    speculative = check(guess, "utf-16", real_context_differs) if guess is not None else None
    if not request:
        request.append(_read_request(req_fd))
        asked(request[0])
    ctx, encoding = request[0][:2]
    reuse = speculative is not None and guess is not None and encoding == "utf-16" and same_check(guess, ctx)
    result = speculative if reuse else check(ctx, encoding)
    assert result is not None  # only a speculative check can be abandoned
    return result


def _once(fn: Callable[[Any], None]) -> Callable[[Any], None]:
    """`fn`, called the first time only."""
    called: list[bool] = []

    def first(arg: Any) -> None:
        if not called:
            called.append(True)
            fn(arg)

    return first


Listing = tuple[list[tuple[str, str, int]], str | None, list]  # (path, vpath, segment)s, MEMORY.md, problems


def _files_of_shard(root: Path, index: int, count: int) -> tuple[Any, Listing, Callable[[], None]]:
    """(the findings cache, this shard's files as the store's kept listing or a walk has them, what keeps
    the listing for the next start)."""
    from ...caches.findings import FindingsCache
    from ...caches.listing import kept

    cache = FindingsCache.open(root)
    listing = kept(cache.conn, str(root), (index, count)) if cache is not None else None
    if listing is not None:
        return cache, listing, lambda: None
    return cache, *_scan(root, index, count, cache)


def _scan(root: Path, index: int, count: int, cache) -> tuple[Listing, Callable[[], None]]:
    """The store walked: (this shard's files as (path, vpath, segment), MEMORY.md's vpath, the scan's
    problems), and what keeps the listing for the next start (the first worker keeps the whole store's,
    after the server has its answer)."""
    from ...caches.listing import confirm_and_keep, forget, keep, settled
    from ...caches.segments import segment_of
    from ...store.scan import ScanTree
    from ...store.store import scan_names

    tree = ScanTree()
    files, problems = scan_names(root, tree)
    mine: list[tuple[str, str, int]] = []  # a shard is whole segments (see shard_of)
    segments: dict[int, list[str]] = {}
    index_vpath = None
    for path, vpath, is_index in files:
        if is_index:
            index_vpath = vpath
            continue
        seg = segment_of(vpath)
        if seg % count == index:
            mine.append((path, vpath, seg))
        if index == 0:
            segments.setdefault(seg, []).append(vpath)
    del files  # the whole store's listing: this worker keeps its own share (and the first, every vpath)

    def keep_listing() -> None:
        if cache is None or index != 0:
            return
        if tree.unsure:
            forget(cache.conn)
        elif settled(tree):
            keep(cache.conn, str(root), tree, segments, index_vpath, problems)
        else:  # folders that had just changed: a later start could not trust them as they were
            confirm_and_keep(cache.conn, str(root), tree, segments, index_vpath, problems)

    return (mine, index_vpath, problems), keep_listing


def _read_request(req_fd: int) -> tuple:
    (length,) = _HEADER.unpack(_read_exact(req_fd, _HEADER.size, time.monotonic() + 600))
    return pickle.loads(_read_exact(req_fd, length, time.monotonic() + 60))


def same_check(a: Context, b: Context) -> bool:
    """Whether two contexts give the same findings (clocks a few seconds apart count as the same)."""
    return (
        a.root == b.root
        and a.active == b.active
        and a.thresholds == b.thresholds
        and a.severity == b.severity
        and abs(a.now - b.now) < 5
    )


CHUNK = 2000  # files per chunk sent to the server


def _renderer(root: Path, encoding: str) -> tuple[Callable[..., bytes], Callable[[str], str]]:
    """(a file's findings as one framed publishDiagnostics (b"" when there are none), a vpath's URI)."""
    from ...store.root import VIRTUAL_ROOT
    from ..convert import findings_frame
    from ..uris import path_to_uri, plain_uri, root_uri

    prefix, base = str(root), root_uri(root)

    def uri_of(vpath: str) -> str:  # the same URIs the server makes (Session.uri_of), no Path per file
        return plain_uri(base, vpath) or path_to_uri(prefix + vpath[len(VIRTUAL_ROOT) :])

    def render(memory, findings) -> bytes:
        if not findings:
            return b""
        return findings_frame(uri_of(memory.vpath), findings, memory.lines, encoding, uri_of)

    return render, uri_of


class _Outbox:
    """What a worker has checked and not yet sent: framed diagnostics (with their files) and records.
    Sent every CHUNK files when `stream` takes it (a worker of a big store then never holds its whole
    shard); otherwise (a speculative check not yet confirmed) kept for `chunks` at the end."""

    def __init__(self, stream: Callable[[tuple[str, object]], bool] | None, variant: str = "") -> None:
        self.stream = stream
        self.variant = variant  # the findings cache's, where the server reads a segment's records
        self.records: list[tuple[str, float, int, int, Record | None]] = []
        self.payloads: list[bytes] = []
        self.with_findings: list[str] = []
        self.segments: list[tuple[str, object]] = []  # snapshots not streamed yet

    def add(
        self, vpath: str, mtime: float, size: int, key: int, payload: bytes, record: Record | None
    ) -> None:
        self.records.append((vpath, mtime, size, key, record))
        if payload:
            self.payloads.append(payload)
            self.with_findings.append(vpath)
        if len(self.records) >= CHUNK:
            self.flush()

    def segment(self, vpaths: list[str], uris: str, frames: bytes, snap: Snapshot, aged: set[str]) -> None:
        """A segment answered by its snapshot, less its `aged` files (checked again on their own); its
        files and its URIs (already so) joined by NUL (see JsonRecords)."""
        key = (self.variant, snap.seg, snap.listing)
        chunk = ("segment", ("\0".join(vpaths), uris, frames, key, sorted(aged)))
        if self.stream is None or not self.stream(chunk):
            self.segments.append(chunk)

    def flush(self) -> None:
        stream = self.stream
        if stream is None or not stream(("frames", (list(self.with_findings), b"".join(self.payloads)))):
            return
        stream(("records", PickledRecords.of(self.records)))
        self.records.clear()
        self.payloads.clear()
        self.with_findings.clear()

    def chunks(self) -> Iterator[tuple[str, object]]:
        """What was kept rather than streamed (a speculative check's finds), and the last chunk."""
        yield from self.segments
        for start in range(0, len(self.payloads), CHUNK):
            part = self.with_findings[start : start + CHUNK]
            yield ("frames", (part, b"".join(self.payloads[start : start + CHUNK])))
        for start in range(0, len(self.records), CHUNK):
            yield ("records", PickledRecords.of(self.records[start : start + CHUNK]))


class _Lister:
    """The prompt block's listing lines of the files checked: visible ones listed, others counted."""

    def __init__(self, active) -> None:
        from ...store.prompt_block import line_of
        from ...store.workspace import visibility

        self.active = active
        self.line_of, self.visibility = line_of, visibility
        self.visible: dict[tuple, bool] = {}  # (type, stamp) -> visible in this context (few stamps)

    def line(self, vpath: str, category: Any, stamp: object, title: Any) -> str | None:
        """The file's listing line, None when it is not listed (a session memory, another workspace's)
        — see `hidden` for which."""
        if category == "session" or not self.shown(stamp):
            return None
        return self.line_of(vpath, category, title)

    def shown(self, stamp: object) -> bool:
        key = (type(stamp), stamp if isinstance(stamp, (str, int, float, bool, type(None))) else repr(stamp))
        seen = self.visible.get(key)
        if seen is None:
            seen = self.visible[key] = self.visibility(stamp, self.active).visible
        return seen


def _check(
    root: Path,
    files: list[tuple[str, str, int]],
    ctx,
    encoding: str,
    shard: tuple[int, int],
    cache,
    abandon=None,
    stream: Callable[[tuple[str, object]], bool] | None = None,
    said: Callable[[RecallSaid], None] | None = None,
) -> tuple[ShardResult, Chunks, Callable[[], None]] | None:
    """Check this worker's files: segments whose snapshot still holds are sent as kept, the others go
    through the findings cache a file at a time and get a new snapshot afterwards. Sent back: framed
    diagnostics, the listing and each file's compact record, never the files' text (each memory is
    dropped once listed). `said` hears how the recall index compares, before any file is sent."""
    from ...caches.checked import check_files
    from ...caches.findings import variant_key

    render, uri_of = _renderer(root, encoding)
    variant = variant_key(ctx, f"lsp-{encoding}")
    outbox = _Outbox(stream, variant)
    result = ShardResult([], [], 0)
    lister = _Lister(ctx.active)
    stats: dict[str, Seen] = {}
    if fresh := _nothing_kept(root, cache, variant):  # what a stat says of each file comes with its reading
        answered: tuple | None = _all_to_check(files, said)
    else:
        by_segment, stats, listings = _stat_files(files)
        answered = _from_snapshots(root, by_segment, listings, cache, variant, ctx.now, result, outbox, abandon,
                                   said)  # fmt: skip
    if answered is None:
        return None
    # `rest` comes segment by segment, a segment's files together: see _SnapshotSink.
    rest, redo, aged_only = answered
    each = _Each(result, outbox, lister, {vpath for vpaths in redo.values() for vpath in vpaths},
                 stats if fresh else None)  # fmt: skip
    # A cold start keeps its segments' snapshots only (a segment that changes later is read again whole,
    # and gets per-file entries, as the CLI keeps them, from then on).
    sink = _SnapshotSink(cache, variant, redo, stats, ctx.now, each.seen, uri_of, keep=result.hits > 0,
                         defer=len(rest) <= ENTRIES_DEFERRED)  # fmt: skip

    checked = check_files(
        rest, ctx, f"lsp-{encoding}", render, cache, shard=shard, abandon=abandon, each=each,
        all_files=len(rest) == len(files), stats=stats, entries=sink.add if cache is not None else None,
    )  # fmt: skip
    if checked is None:
        return None
    result.hits += checked.hits

    def write_back() -> None:
        if cache is None:
            return
        if sink.kept is not None:  # entries for the files checked one by one
            checked.pending, sink.kept = sink.kept, None
            checked.write_back(cache, ctx.now)
            checked.pending = []
        if redo:
            sink.finish(lister, aged_only)

    return result, outbox.chunks, write_back


def _nothing_kept(root: Path, cache, variant: str) -> bool:
    """Whether neither the findings cache (for this variant) nor the recall index holds anything: a
    first start, where a stat of every file before reading it (for the comparisons) would be spent
    for nothing."""
    from ...recall.peek import index_usable

    return cache is not None and not cache.holds_any(variant) and not index_usable(root)


def _all_to_check(
    files: list[tuple[str, str, int]], said: Callable[[RecallSaid], None] | None = None
) -> tuple[list[tuple[str, str]], dict[int, list[str]], set[int]]:
    """What `_from_snapshots` answers when nothing is kept: every file to check, segment by segment,
    and every segment to get its snapshot (of the files read; see _Each). There is no recall index to
    compare with: `said` is told so."""
    if said is not None:
        said(None)
    by_segment: dict[int, list[tuple[str, str]]] = {}
    for path, vpath, seg in files:
        by_segment.setdefault(seg, []).append((path, vpath))
    rest: list[tuple[str, str]] = []
    redo: dict[int, list[str]] = {}
    for seg, seg_files in sorted(by_segment.items()):
        rest += seg_files
        redo[seg] = [vpath for _, vpath in seg_files]
    return rest, redo, set()


def _stat_files(
    files: list[tuple[str, str, int]],
) -> tuple[dict[int, list[tuple[str, str]]], dict[str, Seen], dict[int, list[tuple[str, int]]]]:
    """(the files of each segment, what a stat says of each file, each segment's listing of its files'
    (vpath, freshness key)): one pass, a stat per file and nothing more (a warm start of a big store does
    little else). A file that cannot be stat'ed is in its segment but not in its listing."""
    from ...store.freshness import seen_of

    by_segment: dict[int, list[tuple[str, str]]] = {}
    stats: dict[str, Seen] = {}
    listings: dict[int, list[tuple[str, int]]] = {}
    stat = os.stat
    for path, vpath, seg in files:
        by_segment.setdefault(seg, []).append((path, vpath))
        try:
            seen = seen_of(stat(path))
        except OSError:
            continue
        stats[vpath] = seen
        listings.setdefault(seg, []).append((vpath, seen.key))
    return by_segment, stats, listings


class _Each:
    """What a worker does with each file checked one by one: its listing line, what its segment's new
    snapshot will need, and the file itself into the outbox."""

    def __init__(self, result: ShardResult, outbox: _Outbox, lister: _Lister, remade: set[str],
                 stats: dict[str, Seen] | None = None) -> None:  # fmt: skip
        """`stats`: filled with what each file's reading saw, when the files were not stat'ed."""
        from ...caches.segments import listing_kind

        self.result, self.outbox, self.lister, self.remade = result, outbox, lister, remade
        self.stats = stats
        self.kind = listing_kind
        self.seen: dict[str, tuple[str | None, str, str | None]] = {}  # vpath -> (line, kind, path stamp)

    def __call__(self, c: Checked) -> None:
        # The listing from the record: no memory is made for a file the cache answered.
        record = c.record
        if record is None:
            category, stamp, title = c.memory.category, c.memory.stamp, c.memory.title
        else:
            category, stamp, title = record[0], record[2], record[9]
        line = self.lister.line(c.vpath, category, stamp, title)
        if line is not None:
            self.result.listed.append((c.vpath, line))
        elif category != "session":
            self.result.hidden += 1
        if self.stats is not None:
            self.stats[c.vpath] = Seen(c.mtime, c.size, c.key)
        if c.vpath in self.remade:
            self.seen[c.vpath] = (line, self.kind(line, category), str(stamp) if _is_path(stamp) else None)
        self.outbox.add(c.vpath, c.mtime, c.size, c.key, c.payload, record)


def _from_snapshots(
    root: Path,
    by_segment: dict[int, list[tuple[str, str]]], listings: dict[int, list[tuple[str, int]]],
    cache, variant: str, now: float, result: ShardResult, outbox: _Outbox, abandon,
    said: Callable[[RecallSaid], None] | None = None,
) -> tuple[list[tuple[str, str]], dict[int, list[str]], set[int]] | None:  # fmt: skip
    """Send the segments whose snapshot still holds (their listing added to `result`): (the files left
    to check one by one, segment by segment, and the vpaths of each segment to get a new snapshot);
    None when abandoned. The recall index is compared with every segment first, and `said` told."""
    kept = cache.segments(variant, by_segment) if cache is not None else {}
    digests = _compare_recall(root, by_segment, listings, result, abandon, said)
    if digests is None:
        return None
    plan = _Plan([], {}, set())
    for seg, seg_files in sorted(by_segment.items()):
        if abandon is not None and abandon():
            return None
        listing = listings.get(seg, [])
        snap = kept.get(seg)
        if snap is not None and _answers_whole(
            snap, listing, digests[seg], now, cache.probes, result, outbox
        ):
            continue
        if snap is not None and _answers_partly(snap, seg_files, listing, digests[seg], now, cache.probes,
                                                result, outbox, plan):  # fmt: skip
            continue
        plan.rest += seg_files
        plan.redo[seg] = [vpath for vpath, *_ in listing]
    return plan.rest, plan.redo, plan.aged_only


@dataclass
class _Plan:
    """What `_from_snapshots` leaves to do: the files to check one by one, the vpaths of each segment to
    get a new snapshot, the segments answered by their snapshot but made again for their aged files."""

    rest: list[tuple[str, str]]
    redo: dict[int, list[str]]
    aged_only: set[int]


def _compare_recall(
    root: Path, by_segment: dict[int, list[tuple[str, str]]], listings: dict[int, list[tuple[str, int]]],
    result: ShardResult, abandon, said: Callable[[RecallSaid], None] | None,
) -> dict[int, bytes] | None:  # fmt: skip
    """Each segment's listing digest, with the recall index compared to every segment on the way (told
    to `said` before any file is sent); None when abandoned."""
    from ...caches.segments import listing_digest

    lag = _RecallLag(root)
    digests: dict[int, bytes] = {}
    for seg in sorted(by_segment):
        if abandon is not None and abandon():
            lag.lag.close()
            return None
        listing = listings.get(seg, [])
        digests[seg] = digest = listing_digest(listing)
        lag.add(seg, listing, digest)
    result.recall = lag.said()
    if said is not None:
        said(lag.told(result.recall, sum(len(f) for f in by_segment.values())))
    return digests


def _answers_partly(
    snap: Snapshot, seg_files: list[tuple[str, str]], listing: list[tuple[str, int]], digest: bytes, now: float,
    memo: dict[str, str], result: ShardResult, outbox: _Outbox, plan: _Plan,
) -> bool:  # fmt: skip
    """Send a segment whose snapshot holds but some of whose files aged, less those files (added to
    `plan.rest`, checked again); False when the snapshot cannot answer (too many aged, parts not whole)."""
    from ...caches.segments import HIDDEN

    usable = _usable(snap, listing, digest, now, memo)
    if usable is None:
        return False
    index, lines = usable
    aged = {e[0] for e in index if not e[1] > now}
    frames = _without(snap.frames, [(e[2], e[3]) for e in index if e[0] in aged])
    if len(aged) * AGED_SHARE > len(index) or _whole_frames(frames) is None:
        return False
    result.listed += [(vpath, line) for vpath, line in lines if vpath not in aged]
    result.hidden += sum(1 for e in index if e[5] == HIDDEN and e[0] not in aged)
    result.hits += len(index) - len(aged)
    uris = "\0".join([e[4] for e in index if e[4] and e[0] not in aged])
    outbox.segment([x[0] for x in listing if x[0] not in aged], uris, frames, snap, aged)
    # Checked again; the snapshot is made again only once a fair share has aged (each start checks
    # those few again, from their own entries, until then).
    plan.rest += [(path, vpath) for path, vpath in seg_files if vpath in aged]
    if len(aged) * REMAKE_SHARE > len(index):
        plan.redo[snap.seg] = [vpath for vpath, *_ in listing]
        plan.aged_only.add(snap.seg)
    return True


RECALL_KEEP = 500  # changed files a worker names (a start writes up to this many itself)


# How a worker's files compare with the recall index, told to the server before any file is sent:
# ((matched, changed, the first changed vpaths), the segments whose seal matched (the index holds
# exactly their files), every other segment of the worker's with files: its vpaths joined by NUL, and
# how many files the worker has); None when the index could not be read.
RecallSaid = tuple[tuple[int, int, list[str]], list[int], dict[int, str], int] | None


class _RecallLag:
    """The recall index compared with a shard's files, segment by segment: a sealed segment whose
    digest matches costs nothing, the others are looked up row by row (recall/peek.py)."""

    def __init__(self, root: Path) -> None:
        from ...recall.peek import Lag

        self.lag = Lag(root, keep=RECALL_KEEP)
        self.seals = self.lag.sealed()
        self.sealed: list[int] = []  # segments matched by their seal
        self.compared: dict[int, str] = {}  # the others: their vpaths, joined by NUL

    def add(self, seg: int, listing: list[tuple[str, int]], digest: bytes) -> None:
        if self.lag.conn is not None and self.seals.get(seg) == digest:
            self.sealed.append(seg)
        else:
            self.compared[seg] = "\0".join(vpath for vpath, _ in listing)
        self.lag.add_segment(listing, digest, self.seals, seg)

    def told(self, said: tuple[int, int, list[str]] | None, files: int) -> RecallSaid:
        return None if said is None else (said, self.sealed, self.compared, files)

    def said(self) -> tuple[int, int, list[str]] | None:
        """(matched, changed, the first changed vpaths); None when the index could not be read."""
        lag = self.lag
        if lag.conn is None:
            return None
        lag.close()
        return lag.matched, lag.changed, lag.changed_vpaths


AGED_SHARE = 4  # a segment with more than a quarter of its files aged is checked again whole
REMAKE_SHARE = 16  # a segment's snapshot is made again once more than a sixteenth of its files aged
SNAPSHOTS_HELD = 4 << 20  # bytes of made snapshots a worker holds before writing them
ENTRIES_DEFERRED = 8_000  # files a worker checks whose snapshots wait for the answer (about 1 KB each)


def _answers_whole(
    snap: Snapshot, listing: list[tuple[str, int]], digest: bytes, now: float, memo: dict[str, str],
    result: ShardResult, outbox: _Outbox,
) -> bool:  # fmt: skip
    """Send a segment whose snapshot holds for every one of its files (none has aged: the earliest
    `valid_until` is still ahead) as it is, from the snapshot's own URIs and counts: the per-file index
    is not even decoded (a warm start of a big store does this for nearly every segment)."""
    if not (snap.valid_until > now and _holds(snap, listing, digest, now, memo)):
        return False
    try:
        lines = json.loads(snap.listed)
    except (ValueError, RecursionError):
        return False
    uris = snap.uris.count("\0") + 1 if snap.uris else 0
    if not (_lines_whole(lines) and _whole_frames(snap.frames) == uris and 0 <= snap.hidden <= snap.count):
        return False
    result.listed += [(vpath, line) for vpath, line in lines]
    result.hidden += snap.hidden
    result.hits += snap.count
    outbox.segment([vpath for vpath, _ in listing], snap.uris, snap.frames, snap, set())
    return True


def _holds(
    snap: Snapshot, listing: list[tuple[str, int]], digest: bytes, now: float, memo: dict[str, str]
) -> bool:
    """Whether the snapshot is of these files as they are: the same files unchanged, the clock not
    before it, every path stamp probing the same on disk."""
    from ...caches.findings import stamp_probe

    if not (snap.since <= now and snap.count == len(listing) and snap.listing == digest):
        return False
    return all(stamp_probe(stamp, memo) == probe for stamp, probe in snap.probes)


def _lines_whole(lines: object) -> bool:
    return isinstance(lines, list) and all(
        isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], str) for x in lines
    )


def _usable(
    snap: Snapshot, listing: list[tuple[str, int]], digest: bytes, now: float, memo: dict[str, str]
) -> tuple[list[list], list[tuple[str, str]]] | None:
    """(the snapshot's files, its listing lines) when it still answers for the segment: the same files
    unchanged, the clock not before it, every path stamp probing the same on disk, its parts whole."""
    if not _holds(snap, listing, digest, now, memo):
        return None
    try:
        index, lines = json.loads(snap.files), json.loads(snap.listed)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(index, list) and len(index) == snap.count and _ranges_whole(index, len(snap.frames))):
        return None
    if not _lines_whole(lines):
        return None
    return index, [(vpath, line) for vpath, line in lines]


def _ranges_whole(index: list, size: int) -> bool:
    """Whether the files' entries are [vpath, until, start, end, uri, kind] with frame ranges that
    follow each other from 0 to `size`."""
    at = 0
    for e in index:
        if not (
            isinstance(e, list) and len(e) == 6 and isinstance(e[0], str) and isinstance(e[1], (int, float))
            and isinstance(e[2], int) and isinstance(e[3], int) and isinstance(e[4], str)
            and isinstance(e[5], str) and e[2] == at and e[3] >= at
        ):  # fmt: skip
            return False
        at = e[3]
    return at == size


def _without(blob: bytes, cuts: list[tuple[int, int]]) -> bytes:
    """`blob` less the byte ranges `cuts` (in order, not overlapping)."""
    if not cuts:
        return blob
    parts, at = [], 0
    for start, end in cuts:
        parts.append(blob[at:start])
        at = end
    parts.append(blob[at:])
    return b"".join(parts)


def _whole_frames(blob: bytes) -> int | None:
    """How many complete `Content-Length` framed messages `blob` is made of; None when it is anything
    else."""
    head = b"Content-Length: "
    pos, end, count = 0, len(blob), 0
    while pos < end:
        if not blob.startswith(head, pos):
            return None
        stop = blob.find(b"\r\n\r\n", pos)
        digits = blob[pos + len(head) : stop] if stop > 0 else b""
        if not digits.isdigit():
            return None
        pos = stop + 4 + int(digits)
        if pos > end:
            return None
        count += 1
    return count


def _is_path(stamp: object) -> bool:
    return isinstance(stamp, str) and stamp.startswith(("/", "~"))


def _add_fresh(
    b, vpaths: list[str], fresh: dict[str, Any], seen: dict[str, tuple[str | None, str, str | None]],
    stats: dict[str, Seen], uri_of: Callable[[str], str],
) -> None:  # fmt: skip
    """A segment's files into its snapshot, from the entries its check just made."""
    for vpath in vpaths:
        e, (line, kind, stamp) = fresh[vpath], seen[vpath]
        b.add(vpath, *stats[vpath], e.record, e.valid_until, e.payload,
              uri_of(vpath) if e.payload else "", line, kind)  # fmt: skip
        if stamp is not None:
            b.probes[stamp] = e.probe


class _SnapshotSink:
    """The entries of a worker's check as they are made: a segment whose files all have theirs becomes
    its snapshot at once, written 4 MB at a time, and its entries are let go. The files come segment by
    segment, so a worker holds one segment's entries, not its whole shard's (at 100k, 50 MB each).
    `defer` (a worker with at most ENTRIES_DEFERRED files to check): the snapshots are for the next
    start, so all of them are made after this one's answer, in `finish`."""

    def __init__(
        self, cache, variant: str, redo: dict[int, list[str]], stats: dict[str, Seen],
        now: float, seen: dict[str, tuple[str | None, str, str | None]], uri_of: Callable[[str], str],
        keep: bool, defer: bool = False,
    ) -> None:  # fmt: skip
        self.cache, self.variant, self.redo, self.stats = cache, variant, redo, stats
        self.now, self.seen, self.uri_of = now, seen, uri_of
        self.kept: list[Any] | None = [] if keep else None  # entries for the per-file write-back
        self.deferred: list[Any] | None = [] if defer else None  # taken in `finish`
        self.fresh: dict[int, dict[str, Any]] = {}
        self.done: set[int] = set()
        self.snapshots: list[Snapshot] = []
        self.held = 0

    def add(self, entry: Any) -> None:
        from ...caches.segments import segment_of

        if self.kept is not None:
            self.kept.append(entry)
        seg = segment_of(entry.vpath)
        if seg not in self.redo:
            return
        if self.deferred is not None:
            self.deferred.append((seg, entry))
        else:
            self._take(seg, entry)

    def _take(self, seg: int, entry: Any) -> None:
        vpaths = self.redo[seg]
        fresh = self.fresh.setdefault(seg, {})
        fresh[entry.vpath] = entry
        if len(fresh) == len(vpaths) and all(v in self.seen for v in vpaths):
            self._made(seg, vpaths, self.fresh.pop(seg))

    def _made(self, seg: int, vpaths: list[str], fresh: dict[str, Any]) -> None:
        from ...caches.segments import SnapshotBuilder

        b = SnapshotBuilder()
        _add_fresh(b, vpaths, fresh, self.seen, self.stats, self.uri_of)
        snap = b.snapshot(seg, self.now)
        if snap is None or snap.count != len(vpaths):
            self.fresh[seg] = fresh  # left to `finish`, which drops the segment's old snapshot
            return
        for vpath in vpaths:
            self.seen.pop(vpath, None)
        self.done.add(seg)
        self.snapshots.append(snap)
        self.held += len(snap.frames) + len(snap.records) + len(snap.files)
        if self.held > SNAPSHOTS_HELD:
            self.write()

    def write(self) -> None:
        if self.snapshots:
            self.cache.put_segments(self.variant, self.snapshots, [])
        self.snapshots, self.held = [], 0

    def finish(self, lister: _Lister, aged_only: set[int]) -> None:
        """The rest: the snapshots made and not written, then the segments not made as their files came
        (a file without an entry, a segment only partly checked again), as before."""
        deferred, self.deferred = self.deferred or [], None
        for seg, entry in deferred:
            self._take(seg, entry)
        self.write()
        rest = {seg: vpaths for seg, vpaths in self.redo.items() if seg not in self.done}
        if rest:
            fresh = {v: e for entries in self.fresh.values() for v, e in entries.items()}
            _keep_snapshots(self.cache, self.variant, rest, self.stats, self.now, lister, self.uri_of, fresh,
                            self.seen, aged_only)  # fmt: skip


def _keep_snapshots(
    cache, variant: str, redo: dict[int, list[str]], stats: dict[str, Seen], now: float,
    lister: _Lister, uri_of: Callable[[str], str], fresh: dict[str, Any] | None = None,
    seen: dict[str, tuple[str | None, str, str | None]] | None = None, aged_only: set[int] | None = None,
) -> None:  # fmt: skip
    """After the write-back of the files' entries: a snapshot for each segment checked file by file,
    made from the entries just written (`fresh`, with what `seen` noted of each file) or read back from
    the cache. A segment with a file neither holds gets none: its old snapshot is dropped, unless only
    some of its files aged (it still answers for the others; those are checked again each time until
    their share asks for the whole segment to be checked again)."""
    from ...caches.findings import record_text, stamp_probe
    from ...caches.segments import SnapshotBuilder, listing_kind

    fresh, seen = fresh or {}, seen or {}
    snapshots: list[Snapshot] = []
    stale: list[int] = []
    held = 0
    for seg, vpaths in redo.items():
        b = SnapshotBuilder()
        if vpaths and all(v in fresh and v in seen for v in vpaths):
            _add_fresh(b, vpaths, fresh, seen, stats, uri_of)
        else:
            found: dict[str, tuple[Any, bytes, float]] = {}
            for hits, _ in cache.lookup_batches(variant, stats, now, only=vpaths):
                found.update(hits)
            if len(found) != len(vpaths) or not vpaths:
                if seg not in (aged_only or ()):
                    stale.append(seg)
                continue
            for vpath in vpaths:
                record, payload, until = found[vpath]
                category, stamp, title = record[0], record[2], record[9]
                line = lister.line(vpath, category, stamp, title)
                text = record_text(record)
                if text is None:
                    break
                b.add(vpath, *stats[vpath], text, until, payload, uri_of(vpath) if payload else "", line,
                      listing_kind(line, category))  # fmt: skip
                if _is_path(stamp):
                    b.probes[stamp] = stamp_probe(stamp, cache.probes)
        snap = b.snapshot(seg, now)
        if snap is None or snap.count != len(vpaths):
            stale.append(seg)
            continue
        snapshots.append(snap)
        held += len(snap.frames) + len(snap.records) + len(snap.files)
        if held > SNAPSHOTS_HELD:  # written as they are made: a big shard's would add up to tens of MB
            cache.put_segments(variant, snapshots, stale)
            snapshots, stale, held = [], [], 0
    cache.put_segments(variant, snapshots, stale)
