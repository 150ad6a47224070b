"""The start-up pipeline: one path from `initialize` to a server whose store is the disk's.

Its steps, in order:

1. `initialize` answered: by the start-up front before the LSP stack is imported (front.py), else by
   pygls; either way the session reads the params (`Session.take_initialize`);
2. the client's settings pulled (the front's request, else the Lifecycle feature's; `settings_of`);
3. the first whole-store check, by the pool of worker processes forked before the LSP stack imported
   (shards): N workers, or none (a pool of zero: the check runs in this process). When the front
   started it, the workers' diagnostics already streamed to the editor;
4. the workers' records adopted as the store (no file read twice);
5. the file watcher, then the catch-up: a stat per file finds what changed between the check's scan and
   the watcher's start; then recall follows the store (its index already current when the check found
   it so).

The server builds one `Startup` and hands `run` to the Lifecycle feature, which calls it once the
settings are in.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ...findings.run import check_memory
from ...recall.peek import Lag
from ...store.freshness import key_at, unchanged
from ...store.memory import Memory, load
from ...store.paths import real_path
from ...store.prompt_block import compose_from
from ...store.store import scan_names
from ...wording import counted
from ..convert import diagnostics_frame, diagnostics_json
from ..features.diagnostics import INDEX_VPATH, Diagnostics
from ..heap import release_freed
from ..scheduler import Scheduler
from ..session import Session
from ..wire import Outlet, frame
from .shards import (
    RECALL_KEEP,
    KnownFiles,
    OnFrames,
    OnRecall,
    OnRecords,
    OnSummaries,
    RecallSaid,
    ShardResult,
    Shards,
)

if TYPE_CHECKING:
    from ..features.documents import Documents
    from ..progress import Progress
    from ..recall_sync import RecallSync

log = logging.getLogger("kin_memory.lsp")
FRONT_SYNC_MAX = (
    RECALL_KEEP  # index writes the start-up makes itself; more are left to the server (with progress)
)
ARM_WAIT = 5.0  # seconds the catch-up waits for the file watcher to arm (it reports within 0.1 s)
# Seconds the store's adoption waits for the workers to be gone: they write the next start's snapshots
# once every diagnostic is out, and their memory and the adopted store's together were the start's peak.
WORKERS_GONE_WAIT = 5.0
Say = Callable[[str, bool], None]  # (message, is a warning): a line in the editor's log


@dataclass
class Units:
    """The server's units the start-up drives."""

    session: Session
    scheduler: Scheduler
    documents: Documents
    diagnostics: Diagnostics
    recall: RecallSync
    progress: Progress
    say: Say


class Front(Protocol):
    """What the start-up front (front.Handover) leaves to the start-up."""

    check: Future[FrontCheck | None] | None  # the first check it started, running
    recall_synced: threading.Event  # set when it found the recall index current
    shards: Shards | None  # the workers, when it did not use them


class Startup:
    def __init__(self, units: Units, shards: Shards | None = None, front: Front | None = None) -> None:
        """`shards`: the workers forked for this start (None: a pool of zero); `front`: what the start-up
        front did (its check running, or the workers it left unused)."""
        self.units = units
        self.shards = front.shards if front is not None else shards
        self.front_check: Future[FrontCheck | None] | None = front.check if front is not None else None
        self.recall_synced = front.recall_synced if front is not None else None
        self._logged_problems: set[tuple[str, str]] = set()

    async def run(self) -> None:
        """Steps 3 to 5, once the settings are in."""
        u = self.units
        loop = asyncio.get_running_loop()
        # The editor's answer to creating the progress token is not waited for: the check starts at once.
        progress = asyncio.ensure_future(
            u.progress.begin("startup", "kin-memory", message="loading the store")
        )
        started = time.perf_counter()
        u.diagnostics.start(loop)
        count, how = await self._check()
        # After the check: arming a watch on a 100k store costs a third of a second of it; the catch-up
        # finds what changed meanwhile.
        u.documents.start_watcher(loop)
        if how is not None:  # None: logged where it was done
            u.say(f"kin-memory: {count} memories in {u.session.root} checked in "
                  f"{time.perf_counter() - started:.2f}s{how}", False)  # fmt: skip
        self.log_scan_problems()
        _freeze()
        u.session.ready.set()
        u.documents.release_held()
        u.recall.start(loop)
        u.diagnostics.refresh_settings()
        await u.scheduler.run(self._catch_up)
        await u.scheduler.run(release_freed)  # the catch-up's scan of every file, freed
        (await progress).end(f"{counted(count, 'memory', 'memories')} checked")

    # -- step 3 and 4: the check, by 0..N workers, and the store adopted -------------------------------
    async def _check(self) -> tuple[int, str | None]:
        """(memories checked, how), how None when the check was already logged (by the front)."""
        done = await self._front_done()
        if done is not None:
            return done.count, None
        u = self.units
        loop = asyncio.get_running_loop()

        def stream(vpaths: list[str], frames: bytes, named: str) -> None:  # from the collecting thread
            loop.call_soon_threadsafe(self._publish_frames, vpaths, frames, named)

        # Each worker's diagnostics go out as they arrive, before its records become the store.
        shards, self.shards = self.shards, None
        results = await u.scheduler.run(collect_for, u.session, shards, stream)
        if results is None:  # a pool of zero (or workers for another root, or one failed)
            return await self._check_here()
        for r in results:  # kept only when nobody streamed them
            for frames in r.frames:
                u.diagnostics.publisher.publish_bulk("file", frames, ())
            r.frames = []
        index = index_diagnostics(u.session, results)
        if index is not None:
            u.diagnostics.publisher.publish("file", *index)
        await u.scheduler.run(adopt, u.session, results, shards)
        u.diagnostics.recheck_open()
        return sum(r.count() for r in results), workers_said(results)

    async def _front_done(self) -> FrontCheck | None:
        """The check the front did, its diagnostics recorded as published; None when there was none or
        it could not be used (a failure, another root: then the store is loaded here)."""
        check, self.front_check = self.front_check, None
        if check is None:
            return None
        try:
            done = await asyncio.wrap_future(check)
        except Exception as exc:  # noqa: BLE001 - checked here instead
            log.warning("the start-up check failed (%r): checking again", exc)
            done = None
        session, publisher = self.units.session, self.units.diagnostics.publisher
        if done is None or done.root != session.root:
            if self.recall_synced is not None:
                self.recall_synced.clear()  # whatever the front found, the store is loaded here now
            return None
        publisher.publish_bulk("file", b"", done.uris)  # sent: only recorded
        if done.index is not None:
            publisher.record("file", *done.index)
        done.uris = set()  # at 100k memories, tens of thousands of URIs the publisher now holds
        self.units.diagnostics.recheck_open()
        return done

    async def _check_here(self) -> tuple[int, str]:
        """The check in this process: parsing, checking and JSON framing off the event loop."""
        session, diagnostics = self.units.session, self.units.diagnostics

        def load_and_check() -> tuple[bytes, set[str]]:
            session.store.load_all()
            return diagnostics.store_frames()

        diagnostics.send_store_frames(*await self.units.scheduler.run(load_and_check))
        return sum(1 for _ in session.store.memories()), ""

    def _publish_frames(self, vpaths: list[str], frames: bytes, named: str) -> None:
        session = self.units.session
        self.units.diagnostics.publisher.publish_bulk(
            "file", frames, {session.uri_of(v) for v in vpaths}.union(named.split("\0") if named else ())
        )

    # -- step 5: the catch-up --------------------------------------------------------------------------
    def _catch_up(self) -> None:
        """Once the watcher sees changes (nothing falls between the two): a stat per file catches what
        moved between the check's scan and the watcher's start; those files are read again, and their
        store events recheck and reindex them like any change. MEMORY.md included. Runs off the loop."""
        self.units.documents.armed.wait(ARM_WAIT)
        moved_since_check(self.units.session)

    def log_scan_problems(self) -> None:
        """Entries the scan skipped (a folder named x.md, a symlink out of the store) have no document to
        carry a diagnostic: each gets a logged reason, once."""
        for problem in self.units.session.store.scan_problems():
            if (problem.vpath, problem.reason) not in self._logged_problems:
                self._logged_problems.add((problem.vpath, problem.reason))
                self.units.say(f"kin-memory: {problem.vpath}: {problem.reason}", True)


def moved_since_check(session: Session) -> None:
    """Every file whose freshness key is not the one the store read (or that came or went), read again."""
    root, store = session.root, session.store
    known = {m.vpath: m.key for m in store.disk_memories()}
    files, _ = scan_names(root)
    now = {vpath: key_at(path) for path, vpath, _ in files}
    moved = {v for v, key in now.items() if not unchanged(known.get(v), key)}
    moved |= {v for v in known if v not in now}
    for vpath in sorted(moved):
        store.refresh_path(real_path(root, vpath))


def _freeze() -> None:
    """What the start-up load built lives as long as the server: taken out of the collector's view,
    later collections no longer walk 100k memories in the middle of a keystroke."""
    gc.collect()
    gc.freeze()
    release_freed()


@dataclass
class FrontCheck:
    """The first check as the start-up front did it, before the LSP stack was loaded: every diagnostic
    already sent, the store already adopted, the log line already written."""

    root: Path
    count: int
    uris: set[str]  # documents whose diagnostics went out
    index: tuple[str, list[dict]] | None  # MEMORY.md's document and diagnostics, sent


def check_in_front(session: Session, shards: Shards, outlet: Outlet, recall_synced: threading.Event,
                   scheduler: Scheduler) -> FrontCheck | None:  # fmt: skip
    """The workers' check, streamed to the editor as it arrives; None when it could not be used (the
    server then checks as usual). Runs on a thread of its own while the LSP stack imports. When the
    recall index matches every file the workers checked (a warm start), `recall_synced` is set: the
    server's recall then starts from the index as it is."""
    started = time.perf_counter()
    uris: set[str] = set()
    with_findings: list[list[str]] = []  # made URIs once the editor has every diagnostic
    named_uris: list[str] = []  # the same, as the workers named them (split then too)
    send = outlet.send

    def on_frames(vpaths: list[str], frames: bytes, named: str) -> None:
        with_findings.append(vpaths)
        if named:
            named_uris.append(named)
        if frames:  # none when the workers wrote them to the editor: no turn taken for nothing
            send(frames)

    lag = Lag(session.root, keep=FRONT_SYNC_MAX)  # the recall index, with the workers' comparisons added
    early = _EarlyRecall(session, lag, len(shards.results), send, recall_synced, started)
    index_said = _IndexEarly(session, send)
    try:
        if lag.conn is not None:  # loaded while the workers check, should a few files need indexing
            scheduler.submit(_load_recall)
        results = _collect_shared(session, shards, outlet, on_frames, early.heard, index_said.heard)
        if results is None:
            return None
        for r in results:
            for frames in r.frames:
                send(frames)
            r.frames = []
        index = index_said.index if index_said.made else index_diagnostics(session, results)
        if index is not None and not index_said.sent:
            send(diagnostics_frame(*index))
        count = sum(r.count() for r in results)
        send(_log_frame(f"kin-memory: {count} memories in {session.root} checked in "
                        f"{time.perf_counter() - started:.2f}s{workers_said(results)}"))  # fmt: skip
        behind = lag.behind() if count and not early.done and _compared(lag, results) else None
        if behind == 0:
            # Said (and set: whoever reads the line finds recall ready) before the store is adopted:
            # the server's recall starts only once it is (see RecallSync.start).
            recall_synced.set()
            send(_log_frame(f"kin-memory: recall index: 0 of {count} memories (re)indexed, 0 removed, "
                            f"in {time.perf_counter() - started:.2f}s (current at start)"))  # fmt: skip
        if behind is not None and 0 < behind <= FRONT_SYNC_MAX:
            _sync_recall(session, results, lag, send, recall_synced)
        uri_of = session.uri_of
        for vpaths in with_findings:
            uris.update(map(uri_of, vpaths))
        for named in named_uris:
            uris.update(named.split("\0"))
        adopt(session, results, shards)
    except Exception as exc:  # noqa: BLE001 - the server checks as usual instead
        log.warning("the start-up check failed (%r): checking again", exc)
        return None
    finally:
        lag.close()
    return FrontCheck(session.root, count, uris, index)


def _collect_shared(session: Session, shards: Shards, outlet: Outlet, on_frames: OnFrames,
                    on_recall: OnRecall, on_summaries: OnSummaries) -> list[ShardResult] | None:  # fmt: skip
    """The workers write their diagnostics to the editor themselves instead of through this process
    (which is importing the LSP stack meanwhile), taking turns with this process's writes. The records
    are made memories when adopted (not while the workers stream)."""
    token = shards.token
    if token is not None:
        outlet.share(token)
    try:
        return collect_for(session, shards, on_frames, lambda chunk: None, direct=token is not None,
                           on_recall=on_recall, on_summaries=on_summaries)  # fmt: skip
    finally:
        outlet.alone()


class _IndexEarly:
    """MEMORY.md's diagnostics made and sent as soon as every worker's listing is in, while the workers'
    last frames are still going out to the editor (they need the whole listing, so they came last,
    after every worker was done). A failure leaves them to the end of the check, as before."""

    def __init__(self, session: Session, send: Callable[[bytes], None]) -> None:
        self.session, self.send = session, send
        self.index: tuple[str, list[dict]] | None = None
        self.made = self.sent = False

    def heard(self, results: list[ShardResult]) -> None:
        try:
            self.index = index_diagnostics(self.session, results)  # the listing is let go of then
            self.made = True
            if self.index is not None:
                self.send(diagnostics_frame(*self.index))
            self.sent = True
        except Exception as exc:  # noqa: BLE001 - made again at the end of the check
            log.info("MEMORY.md's diagnostics not made early: %r", exc)


class _EarlyRecall:
    """The recall index brought current as soon as every worker told how it compares with its files,
    before their diagnostics are all out: a search sent at start (see early.py) is then answered
    completely without waiting for the check. Only when the comparisons say exactly what is missing
    (at most FRONT_SYNC_MAX files to write); otherwise, or when a worker could not compare, the end of
    the check decides as before (`done` stays False)."""

    def __init__(self, session: Session, lag: Lag, workers: int, send: Callable[[bytes], None],
                 synced: threading.Event, started: float) -> None:  # fmt: skip
        self.session, self.lag, self.workers, self.send = session, lag, workers, send
        self.synced, self.started = synced, started
        self.said: list[RecallSaid] = []
        self.done = False

    def heard(self, said: RecallSaid) -> None:
        self.said.append(said)
        if len(self.said) == self.workers:
            try:
                self.done = self._sync()
            except Exception as exc:  # noqa: BLE001 - the end of the check decides instead
                log.info("recall index not synced early: %r", exc)

    def _sync(self) -> bool:
        told = [s for s in self.said if s is not None]
        if len(told) != self.workers:
            return False
        changed_vpaths: list[str] = []
        changed = files = matched = 0
        sealed: set[int] = set()
        listed: dict[int, set[str]] = {}
        for (n_matched, n_changed, vpaths), segs, compared, n_files in told:
            matched += n_matched
            changed += n_changed
            changed_vpaths += vpaths
            files += n_files
            sealed.update(segs)
            listed.update(
                {seg: set(names.split("\0")) if names else set() for seg, names in compared.items()}
            )
        if not files or changed != len(changed_vpaths):  # not every changed file named: too many
            return False
        # Every row the index holds matched by a file (the usual warm start): nothing gone, no need to
        # read its 100,000 names.
        total = self.lag.total()
        gone = [] if total == matched else self.lag.gone_from(sealed, listed) if total is not None else None
        if gone is None or changed + len(gone) > FRONT_SYNC_MAX:
            return False
        if changed or gone:
            if not _write_recall(self.session.root, gone, changed_vpaths):
                return False
            note = f"{len(changed_vpaths)} of {files} memories (re)indexed, {len(gone)} removed"
        else:
            note = f"0 of {files} memories (re)indexed, 0 removed"
        # Set before the line is sent: whoever reads it finds recall ready (see RecallSync.start).
        self.synced.set()
        elapsed = time.perf_counter() - self.started
        self.send(_log_frame(f"kin-memory: recall index: {note}, in {elapsed:.2f}s"
                             + ("" if changed or gone else " (current at start)")))  # fmt: skip
        return True


def _compared(lag: Lag, results: list[ShardResult]) -> bool:
    """The workers' comparisons of the recall index with their files, added up in `lag`; False when a
    worker could not make it (the server's recall then syncs as usual)."""
    said = [r.recall for r in results]
    if any(s is None for s in said):
        return False
    for matched, changed, vpaths in said:  # type: ignore[misc]
        lag.matched += matched
        lag.changed += changed
        lag.changed_vpaths += vpaths[: max(0, lag.keep - len(lag.changed_vpaths))]
    return True


def _load_recall() -> None:
    from ...recall import index, records  # noqa: F401 - the import is the point


def _sync_recall(session: Session, results: list[ShardResult], lag: Lag, send: Callable[[bytes], None],
                 recall_synced: threading.Event) -> None:  # fmt: skip
    """The few changes the index lacks (files written while the editor was closed), written here rather
    than after the LSP stack has loaded: what a sync would write, from what the comparison found. A
    failure leaves the sync to the server's recall."""
    started = time.perf_counter()
    gone = lag.gone(set().union(*(r.vpaths() for r in results)))
    if gone is None or not _write_recall(session.root, gone, lag.changed_vpaths):
        return
    recall_synced.set()
    count = sum(r.count() for r in results)
    send(_log_frame(f"kin-memory: recall index: {len(lag.changed_vpaths)} of {count} memories (re)indexed, "
                    f"{len(gone)} removed, in {time.perf_counter() - started:.2f}s"))  # fmt: skip


def _write_recall(root: Path, gone: list[str], changed: list[str]) -> bool:
    """What a sync would write for these files: whether it was written (a failure leaves the sync to the
    server's recall)."""
    from ...recall.index import RecallIndex
    from ...recall.records import doc_from_memory

    try:
        index = RecallIndex(root)
        try:
            index.remove(gone)
            docs = [doc_from_memory(load(real_path(root, v), v)) for v in changed]
            index.upsert([doc for doc in docs if doc is not None])
            index.remove([v for v, doc in zip(changed, docs, strict=True) if doc is None])
        finally:
            index.close()
    except Exception as exc:  # noqa: BLE001 - the server's recall syncs it instead
        log.info("recall index not synced at start: %r", exc)
        return False
    return True


def _log_frame(message: str) -> bytes:
    return frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": message}})


def collect_for(
    session: Session,
    shards: Shards | None,
    on_frames: OnFrames,
    on_records: OnRecords | None = None,
    direct: bool = False,
    on_recall: OnRecall | None = None,
    on_summaries: OnSummaries | None = None,
) -> list[ShardResult] | None:
    """The workers' results when they were started for the root this session serves (with on_records,
    the records not made memories yet are left to `adopt`)."""
    if shards is None:
        return None
    if shards.root != session.root:
        shards.close()
        return None
    return shards.collect(session.context(), session.encoding, on_frames=on_frames, on_records=on_records,
                          make=on_records is None, direct=direct, on_recall=on_recall,
                          on_summaries=on_summaries)  # fmt: skip


def workers_said(results: list[ShardResult]) -> str:
    hits = sum(r.hits for r in results)
    return f" by {len(results)} worker processes ({hits} unchanged files from the findings cache)"


def adopt(session: Session, results: list[ShardResult], shards: Shards | None = None) -> None:
    """The server's store, made of the compact memories the workers' records became (no file is read
    twice; a file without a record, unreadable or unusual, is read here). Once the `shards` are gone
    (at most WORKERS_GONE_WAIT seconds): every diagnostic is out by then, and the workers writing the
    next start's snapshots and the store being made here were together the start's memory peak."""
    if shards is not None:
        shards.gone.wait(WORKERS_GONE_WAIT)
    root = session.root
    disk: dict[str, Memory] = {}
    for r in results:
        r.make_memories()
        for vpath, memory in r.memories.items():
            disk[vpath] = memory if memory is not None else load(real_path(root, vpath), vpath).compacted()
        r.memories = {}
    index = session.store.disk.get(INDEX_VPATH)
    if index is not None:
        disk[INDEX_VPATH] = index
    session.store.adopt(disk, [p for r in results for p in r.problems])


def index_diagnostics(session: Session, results: list[ShardResult]) -> tuple[str, list[dict]] | None:
    """MEMORY.md's document and diagnostics, which need the merged listing of every worker."""
    index_vpath = next((r.index_vpath for r in results if r.index_vpath), None)
    found = None
    if index_vpath:
        index = session.store.refresh_path(session.path_of(index_vpath))[1]
        if index is not None:
            listed = [item for r in results for item in r.listed]
            total = sum(r.listed_count() for r in results)
            block = compose_from(listed, sum(r.hidden for r in results), index, total)
            findings = check_memory(index, session.context(), block=block, known=KnownFiles(results))
            found = (session.uri_of(INDEX_VPATH),
                     diagnostics_json(findings, index.lines, session.encoding, session.uri_of))  # fmt: skip
    for r in results:  # at 100k memories the listing is tens of MB, not worth keeping
        r.listed = []
    return found
