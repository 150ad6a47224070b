"""The writes of a split first check that the caller does not wait for.

Each worker writes its own new entries after it answers, while the caller still checks its own (a little
more) files. The caller's are written by a Writer: a process forked before the check, while the caller is
still small, that waits until the caller leaves it its entries (marshalled, in a scratch file: see
frames.leave) once its own share is checked, and writes them through its own connection while the caller
goes on with the answers (merging, listing, printing). The caller waits for it only at the end
(join_writers), after its output. When no Writer can be made, the caller writes them itself.
"""

from __future__ import annotations

import marshal
import os
from typing import TYPE_CHECKING

from .frames import HEADER, MARSHAL_VERSION, leave, read_left, scratch_file

if TYPE_CHECKING:
    from pathlib import Path

    from .checked import CachedCheck
    from .findings import FindingsCache

_still_writing: list[int] = []  # processes of a split check that are writing the findings cache
_closing: list[FindingsCache] = []  # the caller's connections, closed once its writers are done
# What the caller handed its Writer, held until the next split check: the `kin-memory` process ends first
# (cli.entry), and freeing 50,000 entries one by one took 20 ms of a 100k store's check.
_handed: list[object] = []


def still_writing(pids: list[int]) -> None:
    _still_writing.extend(pids)


class Writer:
    """A process forked to write the caller's new entries of a split check, told them once they are made.

    Forked when the check begins: forking the caller at the end, holding its share's results, took 11 ms
    at 10k, and each page the caller wrote afterwards (every object it touched) was copied for it."""

    def __init__(self, pid: int, signal: int, scratch: int) -> None:
        self.pid, self.signal, self.scratch = pid, signal, scratch

    @classmethod
    def fork(cls, root: Path, now: float) -> Writer | None:
        """A Writer waiting for its entries (it ends when told none); None when no process can be made."""
        _handed.clear()  # what an earlier split check handed over
        read_end, write_end = os.pipe()
        scratch = scratch_file()
        try:
            pid = os.fork()
        except OSError:
            for fd in (read_end, write_end, scratch):
                os.close(fd)
            return None
        if pid == 0:  # the writer: never returns
            os.close(write_end)
            _write_when_told(root, now, read_end, scratch)
        os.close(read_end)
        _still_writing.append(pid)
        return cls(pid, write_end, scratch)

    def close_in_child(self) -> None:
        """In another process forked after the Writer: its ends of the Writer's files, closed (the Writer
        sees the end of its pipe only once no process holds it open)."""
        os.close(self.signal)
        os.close(self.scratch)

    def told(self, own: CachedCheck) -> bool:
        """Whether the Writer was handed the caller's new entries (and files gone); its ends are closed
        either way (a Writer not told ends without writing)."""
        try:
            rows = [tuple(entry) for entry in own.pending]
            _handed.append(rows)
            leave(self.signal, self.scratch, [marshal.dumps((own.variant, rows, own.gone), MARSHAL_VERSION)])
            return True
        except (OSError, ValueError):  # ValueError: not plain values (marshal)
            return False
        finally:
            self.let_go()

    def let_go(self) -> None:
        """The caller's ends closed: a Writer not told its entries by then ends without writing."""
        for fd in (self.signal, self.scratch):
            try:
                os.close(fd)
            except OSError:
                pass
        self.signal = self.scratch = -1

    def stop(self) -> None:
        """Ended at once (the split failed: the caller checks and writes everything itself)."""
        self.let_go()
        if self.pid in _still_writing:
            _still_writing.remove(self.pid)
        reap(self.pid, kill=True)


def _write_when_told(root: Path, now: float, signal: int, scratch: int) -> None:
    """The Writer's life: a connection of its own opened while the check runs (the caller's is not used
    across a fork), the size of its entries on the pipe (nothing: none to write), then the entries (plain
    tuples) from the scratch file, written."""
    code = 1
    try:
        from .findings import FindingsCache

        writer = FindingsCache.open(root)
        if writer is not None:
            writer.without_syncs()
        head = b""
        while len(head) < HEADER.size:
            got = os.read(signal, HEADER.size - len(head))
            if not got:
                break
            head += got
        if len(head) == HEADER.size and writer is not None:
            variant, rows, gone = marshal.loads(read_left(scratch, HEADER.unpack(head)[0]))
            writer.store(variant, rows, now, gone)
            writer.checkpoint()
        code = 0
    finally:
        os._exit(code)


def hand_over(writer: Writer | None, own: CachedCheck, root: Path, cache, now: float) -> None:
    """The caller's new entries (and files gone) to its Writer, or written here when there is none or
    it cannot be told. The caller's check then has none left to write."""
    if not (own.pending or own.gone):
        if writer is not None:
            writer.let_go()
    elif writer is None or not writer.told(own):
        from .findings import FindingsCache

        writer_here = cache if cache is not None else FindingsCache.open(root)
        own.write_back(writer_here, now)
        if cache is None and writer_here is not None:
            writer_here.close()
    _handed.append((own.pending, own.gone))
    own.pending, own.gone = [], []


def close_after_writers(cache: FindingsCache) -> None:
    """Close the caller's connection to the findings cache, once no worker writes. A forked worker's
    connection shares what SQLite knows of the file's locks with the one it inherited, so it holds
    none of its own in the kernel's eyes: closed while the worker still writes, the caller's would be
    taken for the last one, and its checkpoint would reset the log under the worker's commits."""
    if not _still_writing:
        cache.close()
    else:
        _closing.append(cache)


def join_writers() -> None:
    """Wait until the workers of the last split check have written what they write and ended: from then
    on the findings cache holds every file that check read."""
    while _still_writing:
        reap(_still_writing.pop(), kill=False)
    while _closing:
        cache = _closing.pop()
        # Closed last, it checkpoints the split check's bulk write: without the two syncs, as its writers
        # wrote (FindingsCache.without_syncs; 10k: 17 → 5 ms at the end of every first check).
        cache.without_syncs()
        cache.close()


def reap(pid: int, kill: bool) -> None:
    """Wait for a worker to end, killing it first when `kill` (it outstayed its welcome)."""
    if kill:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass
