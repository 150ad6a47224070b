"""Checking a store's files across forked processes, a shard each: what the CLI's first `check` does
with a store big enough (the server's cold start has workers of its own, lsp/startup/shards, with the
same framing: caches/frames.py).

The store's files are dealt out into shares (shard_files): the caller's a little more than an even one
(CALLER_SHARE), the workers' the rest, so each process reads, parses and checks its own files and
looks up only their entries. What travels back is an answer left in a nameless file in
memory, its size told on a pipe (marshalled plain values, see _answer and frames.leave): with a Sink,
only what the Sink kept of the files; without one, the whole CachedCheck, merged here into what one
process would have made (the same files in the same order). Each worker writes its own new entries
after it answers; the caller's are written by a Writer, a process forked for them when the check
begins (caches/writing.py), so the merged check has none left to write.

This module knows nothing of LSP: the CLI imports it.
"""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Callable, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..quiet_log import LazyLogger
from .frames import HEADER, MARSHAL_VERSION, leave, read_left, ready, scratch_file
from .writing import Writer, hand_over, join_writers, reap, still_writing

if TYPE_CHECKING:
    from pathlib import Path

    from ..store.context import Context
    from ..store.freshness import Seen
    from ..store.memory import StrPath
    from .checked import CachedCheck, Checked, Render
    from .findings import FindingsCache

log = LazyLogger("kin_memory.caches")  # logging is imported only if something is said
T = TypeVar("T")


class Sink(Protocol):
    """What a shard's process keeps of its files for the caller, each handed over as it is checked."""

    def take(self, checked: Checked) -> None: ...

    def made(self) -> Any:  # plain values (they travel marshalled)
        ...


MAX_WORKERS = 4  # more processes than this cost more in forking and pickling than they save
SHARDED_MIN_FILES = 1_000  # below this, one process reads and checks the store faster than forking would


def workers_setting() -> int | None:
    """KIN_MEMORY_WORKERS: 0 checks in one process, a number forces that many workers, anything else
    (or unset) lets the caller decide."""
    setting = os.environ.get("KIN_MEMORY_WORKERS", "")
    return int(setting) if setting.isdigit() else None


def cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def workers_for(files: int, cold: bool) -> int:
    """How many processes check `files` files: KIN_MEMORY_WORKERS when set, else one per core (at most
    MAX_WORKERS) for a store of SHARDED_MIN_FILES or more that nothing kept answers (`cold`), else one."""
    forced = workers_setting()
    if forced is not None:
        return forced
    if not cold or files < SHARDED_MIN_FILES:
        return 1
    return max(1, min(cores(), MAX_WORKERS))


# The caller's share of a split's files, over an even share. Each worker answers once its own share is
# checked (about 7 ms at 10k, 90 ms at 100k) and then writes its entries (about 4 µs a file); the caller,
# once its share is checked, hands its entries to its Writer and reads the answers: a worker's answer is
# best there by then, and its writes (on the other core, beside the Writer's) need not be done. So the
# caller takes a little more: more, and its share ends after the writes it waits for; less, and it waits
# for the answer.
CALLER_SHARE = 1.015
DEAL = 64  # places in the scan the files are dealt from in turn: each share holds some of every folder


def shard_files(files: Sequence[T], shard: tuple[int, int]) -> list[T]:
    """A shard's files: the store's files dealt out (each DEAL-th file, from each of DEAL places in turn,
    so a share is no one folder's) and cut into shares, the caller's (shard 0) CALLER_SHARE of an even
    one and the workers' the rest, evenly. Any cut will do: the shards are merged in `files`' order,
    and a worker looks up (or a cold check finds) entries by path."""
    index, count = shard
    dealt = list(chain.from_iterable(files[start::DEAL] for start in range(DEAL)))
    caller = min(len(dealt), round(len(dealt) / count * CALLER_SHARE))
    if index == 0:
        return dealt[:caller]
    rest, workers = len(dealt) - caller, count - 1
    return dealt[caller + rest * (index - 1) // workers : caller + rest * index // workers]


def check_sharded(
    files: Sequence[tuple[StrPath, str]],
    ctx: Context,
    form: str,
    render: Render,
    root: Path,
    count: int,
    timeout: float = 600.0,
    sink: Callable[[], Sink] | None = None,
    stats: dict[str, Seen] | None = None,
    cache: FindingsCache | None = None,
) -> tuple[CachedCheck, list[Any]] | None:
    """check_files over `count` processes, each its shard of `files`, merged as one process would have
    made it: the caller's (shard 0, through `cache`, its connection to the findings cache, when it has
    one open, with a little more than its share: see CALLER_SHARE) and `count - 1` forked workers (each
    through its own connection). Each worker writes its new entries and forgets its files gone after
    it answers (the answer has neither); the caller's are written by its Writer, handed them once its
    share is checked, while it goes on with the answers (caches/writing.py). The cache is complete once
    join_writers() returns. None when forking or a worker failed: the caller checks in-process. With
    `sink`, each shard's process hands every file, as it is checked, to a Sink of its own (sink()), which keeps what the caller wants of it (work the caller
    would otherwise do alone after the others): the second item is what each Sink made, in shard
    order, and the files stay where they were checked (none travels back, none is kept): the merged
    check holds only the counts, the earliest change and the probes. `stats`: what a stat of each file
    says, when the caller has them (check_files' `stats`: nothing is stat'ed again).

    The caller checks a shard itself instead of waiting on a worker of its own: a forked process pays
    again for every page it writes of what it inherited, and the answer of one more worker would be
    sent, read and decoded (together a tenth of what the shard's check costs)."""
    if not hasattr(os, "fork") or count < 2:
        return None
    join_writers()  # a previous split's entries are all written before this one looks anything up
    pids: list[int] = []
    fds: list[int] = []
    scratch: list[int] = []  # where each worker leaves its answer (see frames.leave)
    parts: list[tuple[CachedCheck, Any]] | None = None
    writer = Writer.fork(root, ctx.now)  # first: the caller is at its smallest
    try:
        for index in range(1, count):
            read_end, write_end = os.pipe()
            scratch.append(scratch_file())
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                os.close(read_end)
                for fd in fds:
                    os.close(fd)
                if writer is not None:
                    writer.close_in_child()
                _worker(files, ctx, form, render, root, (index, count), (write_end, scratch[-1]), sink, stats)
            os.close(write_end)
            pids.append(pid)
            fds.append(read_end)
        own = _own_shard(files, ctx, form, render, root, count, sink, stats, cache)
        hand_over(writer, own[0], root, cache, ctx.now)  # written while the answers are read and joined
        parts = [own, *_gather(fds, scratch, time.monotonic() + timeout)]
    except Exception as exc:  # noqa: BLE001 - a shard failed (here or in a worker): one process checks
        log.info("check workers failed (%s): checking in one process", exc)
        parts = None
    finally:
        for fd in (*fds, *scratch):
            os.close(fd)
        if parts is None:
            for pid in pids:
                reap(pid, kill=True)
            if writer is not None:
                writer.stop()
        else:  # each answered, its entries written: reaped by join_writers()
            still_writing(pids)
    if parts is None:
        return None
    return merge(files, [check for check, _ in parts]), [made for _, made in parts]


def _own_shard(
    files, ctx, form: str, render, root: Path, count: int, sink, stats, cache
) -> tuple[CachedCheck, Any]:
    """Shard 0, checked by the caller while the workers check theirs: (its check, what its Sink made)."""
    from .findings import FindingsCache

    owned = cache is None
    if owned:
        cache = FindingsCache.open(root)
    try:
        return _check_shard(files, ctx, form, render, (0, count), cache, sink, stats)
    finally:
        if owned and cache is not None:
            cache.close()


def _worker(
    files, ctx, form: str, render, root: Path, shard: tuple[int, int], out: tuple[int, int], sink, stats=None
) -> None:
    code = 1
    try:
        from .findings import FindingsCache

        cache = FindingsCache.open(root)  # its own connection: the parent's is not used across a fork
        if cache is not None:
            cache.without_syncs()
        checked, made = _check_shard(files, ctx, form, render, shard, cache, sink, stats)
        leave(*out, _answer(_flat(checked), made))  # the answer holds no entry: see _flat
        os.close(out[0])
        # Written after the answer, while the caller still checks its own, larger share: the caller
        # waits for this process only at its end (join_writers), never for the answer.
        checked.write_back(cache, ctx.now)
        if cache is not None:
            cache.checkpoint()
        code = 0
    except BaseException:  # noqa: BLE001 - the parent checks in one process instead
        pass
    os._exit(code)  # no atexit, no flushing of the parent's buffers a second time


def _check_shard(
    files, ctx, form: str, render, shard: tuple[int, int], cache, sink, stats
) -> tuple[CachedCheck, Any]:
    """One shard's files checked through `cache` (its new entries not written yet): (its check, what its
    Sink made of its files, each handed over as it was checked)."""
    from .checked import check_files

    mine = shard_files(files, shard)
    taker = sink() if sink is not None else None
    each = taker.take if taker is not None else None
    # Only its own files' entries are looked up, and no other file's is taken for gone.
    checked = check_files(mine, ctx, form, render, cache, stats=stats, each=each, all_files=False)
    assert checked is not None  # nothing to abandon
    return checked, taker.made() if taker is not None else None


Flat = tuple  # a CachedCheck as plain tuples: pickled and unpickled several times faster than dataclasses


def _flat(checked: CachedCheck) -> Flat:
    # A memory travels only for a file without a record (made whole by its check): the others are made
    # from their records where they are wanted.
    rows = [
        (c.vpath, c.payload, c.record, c.until, c.path, c.mtime, c.size, c.key, None if c.record else c.made)
        for c in checked.checked
    ]
    return rows, checked.hits, checked.variant, checked.valid_until, checked.probes


def _answer(flat: Flat, made: Any) -> list[bytes]:
    """A worker's answer as bytes: marshalled when it holds plain values only (a check's rows, records
    and printed segments: several times faster than a pickle both ways, which cost a tenth of a worker's
    time), the memories of odd files (made whole by their check) pickled apart; all of it pickled
    when anything else is in it. The parent and its workers are one Python (forked), the only case
    marshal's format is made for. In parts, sent one after the other (joining megabytes only to send
    them is a copy of each)."""
    rows, *rest = flat
    odd = {n: row[8] for n, row in enumerate(rows) if row[8] is not None}
    if odd:
        rows = [row if row[8] is None else (*row[:8], None) for row in rows]
    try:
        return [b"M", marshal.dumps(((rows, *rest), made, _pickled(odd) if odd else b""), MARSHAL_VERSION)]
    except ValueError:  # not plain values
        return [b"P", _pickled((flat, made))]


def _pickled(value: Any) -> bytes:
    import pickle  # here: nearly every answer is plain values, and the module takes 1.5 ms to import

    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _unpickled(data: bytes | memoryview) -> Any:
    import pickle

    return pickle.loads(data)


def _answered(data: bytes | memoryview) -> tuple[Flat, Any]:
    """(flat, made) from a worker's answer (see _answer)."""
    if data[:1] == b"P":
        return _unpickled(data[1:])
    if data[:1] != b"M":
        raise EOFError("worker answered nothing readable")
    (rows, *rest), made, odd_bytes = marshal.loads(data[1:])
    if odd_bytes:
        for n, memory in _unpickled(odd_bytes).items():
            rows[n] = (*rows[n][:8], memory)
    return (rows, *rest), made


def _unflat(flat: Flat) -> CachedCheck:
    from .checked import CachedCheck, Checked

    rows, hits, variant, valid_until, probes = flat
    return CachedCheck([Checked(*row) for row in rows], hits, variant, [], valid_until, probes, [])


def _gather(fds: list[int], scratch: list[int], deadline: float) -> list[tuple[CachedCheck, Any]]:
    """Every worker's answer: its size from its pipe (EOF there: the worker failed), then the answer
    itself read in place from its scratch file, into a buffer of that size."""
    heads = {fd: b"" for fd in fds}
    bodies: dict[int, memoryview] = {}
    waiting = list(fds)
    while waiting:
        for fd in ready(waiting, deadline):
            data = os.read(fd, HEADER.size - len(heads[fd]))
            if not data:
                raise EOFError("worker exited early")
            heads[fd] += data
            if len(heads[fd]) == HEADER.size:
                waiting.remove(fd)
    for fd, file in zip(fds, scratch, strict=True):
        bodies[fd] = read_left(file, HEADER.unpack(heads[fd])[0])
    parts = []
    for fd in fds:
        flat, made = _answered(bodies[fd])
        parts.append((_unflat(flat), made))
    return parts


def merge(files: Sequence[tuple[StrPath, str]], parts: list[CachedCheck]) -> CachedCheck:
    """The shards' checks as one: files in `files`' order after those the cache answered (as
    check_files orders them), counts added, the earliest change kept, probes joined. What each
    worker wrote back (new entries, files gone) is not written again."""
    from .checked import CachedCheck

    order = {vpath: n for n, (_, vpath) in enumerate(files)} if any(p.checked for p in parts) else {}
    answered = [c for part in parts for c in part.checked[: part.hits]]
    checked = [c for part in parts for c in part.checked[part.hits :]]
    answered.sort(key=lambda c: order[c.vpath])
    checked.sort(key=lambda c: order[c.vpath])
    merged = CachedCheck(answered + checked, sum(p.hits for p in parts), parts[0].variant)
    for part in parts:
        merged.valid_until = min(merged.valid_until, part.valid_until)
        for stamp, probe in part.probes.items():
            merged.probes.setdefault(stamp, probe)
    return merged
