"""The worker processes: forked before the LSP stack imports, each scans the store, keeps every Nth file, waits for the check context, checks and streams back."""

from __future__ import annotations

import gc
import logging
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the workers import no more than they need before the fork
    from ....store.context import Context


from ....caches import sharded
from .channel import (
    _HEADER,
    Chunks,
    OnFrames,
    OnRecall,
    OnRecords,
    OnSummaries,
    Send,
    _gather,
    _read_exact,
    _send,
    _ToServer,
)
from .check import _check
from .records import ShardResult

log = logging.getLogger("kin_memory.lsp")


MAX_WORKERS = sharded.MAX_WORKERS


ONE_WORKER_HITS = 30_000  # cache entries one worker answers in about the time the server takes to start


WRITE_BACK_GRACE = 60.0  # seconds a worker may take to write the findings cache after answering


POSITION_ENCODINGS = ("utf-16", "utf-8", "utf-32")


@dataclass
class Shards:
    root: Path
    pids: list[int] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)  # write ends: parent -> worker
    results: list[int] = field(default_factory=list)  # read ends: worker -> parent
    token: tuple[int, int] | None = None  # the turn to write to the editor (see wire.Outlet.share)
    gone: threading.Event = field(default_factory=threading.Event)  # set once every worker has exited

    @classmethod
    def start(cls, root: Path, workers: int | None = None, guess: Context | None = None) -> Shards | None:
        """Fork the workers; None when the store is missing or forking is unavailable."""
        if not hasattr(os, "fork") or not root.is_dir():
            return None
        from ...wire import new_token, widen_pipe

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
        on_summaries: OnSummaries | None = None,
    ) -> list[ShardResult] | None:
        """Send the check context, gather every worker's result; None if any worker fails. With
        `on_frames`, each worker's diagnostics are handed over as they arrive (its files with findings
        first, then chunks of frames) instead of kept in its result; with `on_records`, each chunk of
        records as it arrives. `make` False: the records not made memories yet are left to the caller
        (ShardResult.make_memories). `direct`: the workers write their diagnostics to the editor
        themselves (the server's output is the editor's and nothing else writes to it until they are
        done); what comes to the server then has the frames left out. `on_recall` hears each worker's
        comparison of the recall index with its files (RecallSaid), told before its files are sent;
        `on_summaries` gets every worker's result as soon as all are in, while their last frames may
        still be on the way to the editor (see _gather)."""
        request = pickle.dumps((ctx, encoding, direct))
        try:
            for fd in self.requests:
                _send(fd, request)
            deadline = time.monotonic() + timeout
            results = _gather(
                self.results, deadline, self.root, on_frames, on_records, on_recall, on_summaries
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
            threading.Thread(target=_reap, args=(pids, grace, self.gone), name="kin-memory-workers",
                             daemon=True).start()  # fmt: skip
        else:
            _reap(pids, 0.0, self.gone)


def _reap(pids: list[int], grace: float, gone: threading.Event | None = None) -> None:
    try:
        _reap_all(pids, grace)
    finally:
        if gone is not None:
            gone.set()


def _reap_all(pids: list[int], grace: float) -> None:
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
        sharded.reap(pid, kill=True)


def _default_workers(root: Path, guess: Context | None = None) -> int:
    """With a findings cache this code wrote for the guessed context (a warm restart) of a store up to
    ONE_WORKER_HITS files, one worker: it mostly stats files, and more would take cores from the
    server's own start (importing the LSP stack) for little. Otherwise one worker per core (at most
    4): the whole store is read and checked, or a big one looked up. Small stores cost the workers a
    few milliseconds; estimating the store's size first would cost the parent a scan on the critical
    path."""
    from ....caches.findings import entries_of_this_code, variant_key

    # The client's position encoding is not known yet: any of them.
    variants = None if guess is None else [variant_key(guess, f"lsp-{e}") for e in POSITION_ENCODINGS]
    if 0 < entries_of_this_code(root, variants) < ONE_WORKER_HITS:
        return 1
    return max(1, min(sharded.cores(), MAX_WORKERS))


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
        # No cyclic garbage collection in a worker, as in the command line's check: what it makes lives
        # until it is sent, none of it is garbage in a cycle, and each collection walked every record
        # and frame kept so far (a tenth of a 100k cold start's check). The process ends when it is done.
        gc.disable()

        out = _ToServer(res_fd, editor, token)
        result, chunks, done = _work(root, index, count, req_fd, guess, out, out.asked)
        for chunk in chunks():  # what was not streamed while checking
            out(chunk)
        result.shorten_listing()
        out(("summary", result))
        out.drain()  # "end" says the editor has every diagnostic of this worker
        out(("end", None))
        out.close()
        del result, chunks  # sent: not kept through the write-back
        _wait_for_the_others(req_fd)
        done()  # the findings cache is written after the server has what it waits for
    except BaseException:  # noqa: BLE001 - the parent falls back to checking in-process
        code = 1
    os._exit(code)


def _wait_for_the_others(req_fd: int) -> None:
    """The write-back is for the next start: it waits until the server has every worker's answer (it
    closes the request pipes then), so that a worker done early does not take a core from the last one
    still checking, whom the editor waits for. At most OTHERS_WAIT seconds."""
    deadline = time.monotonic() + OTHERS_WAIT
    while (left := deadline - time.monotonic()) > 0:
        try:
            if select.select([req_fd], [], [], left)[0] and not os.read(req_fd, 1 << 16):
                return
        except OSError:
            return


OTHERS_WAIT = 30.0


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
    from ....caches.findings import FindingsCache
    from ....caches.listing import kept

    cache = FindingsCache.open(root)
    listing = kept(cache.conn, str(root), (index, count)) if cache is not None else None
    if listing is not None:
        return cache, listing, lambda: None
    return cache, *_scan(root, index, count, cache)


def _scan(root: Path, index: int, count: int, cache) -> tuple[Listing, Callable[[], None]]:
    """The store walked: (this shard's files as (path, vpath, segment), MEMORY.md's vpath, the scan's
    problems), and what keeps the listing for the next start (the first worker keeps the whole store's,
    after the server has its answer)."""
    from ....caches.listing import confirm_and_keep, forget, keep, settled
    from ....caches.segments import segment_of
    from ....store.scan import ScanTree
    from ....store.store import scan_names

    tree = ScanTree()
    files, problems = scan_names(root, tree)
    mine: list[tuple[str, str, int]] = []  # a shard is whole segments (segments.segment_of)
    segments: dict[int, list[str]] = {}
    index_vpath = None
    for path, vpath, is_index in files:
        if is_index:
            index_vpath = vpath
            continue
        seg = segment_of(vpath)
        if seg % count == index:  # as the findings cache answers (lookup_batches)
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
