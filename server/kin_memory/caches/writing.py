"""The writes of a split first check, left to its first worker.

A worker writes its own new entries before it answers (it has a little less to check than the caller),
then the caller's, which the caller hands over once it has the answers: the caller goes on with them
(merging, listing, printing) while the worker's core, idle otherwise, writes. The caller never waits on
the cache's write lock, and waits for the writer only at the end (join_writers), after its output.
Entries that cannot be handed over are written by the caller itself.

One frame on the pipe from the caller to its first worker: the caller's entries and files gone
(marshalled plain values), sent from a thread; the pipe's end says there is nothing more.
"""

from __future__ import annotations

import marshal
import os
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .frames import HEADER, read_exact, send_frame

if TYPE_CHECKING:
    from pathlib import Path

    from .checked import CachedCheck
    from .findings import FindingsCache

_still_writing: list[int] = []  # workers of a split check that answered and are writing
_sending: threading.Thread | None = None  # the caller's entries on their way to the first worker
_closing: list[FindingsCache] = []  # the caller's connections, closed once its writers are done


def still_writing(pids: list[int]) -> None:
    _still_writing.extend(pids)


def hand_over(back: int | None, own: CachedCheck, root: Path, cache, now: float) -> None:
    """The caller's new entries (and files gone) to the first worker (`back`, its pipe, closed here),
    which writes them with its own; written here when it cannot take them. The caller's check then has
    none left to write. Sent from a thread: megabytes wait in the pipe until the worker, writing its own
    entries first, reads them, and the caller goes on meanwhile (join_writers waits for it)."""
    global _sending
    try:
        if back is None:
            raise OSError("no worker to hand the entries to")
        frame = marshal.dumps(([tuple(e) for e in own.pending], own.gone))
    except (OSError, ValueError):  # no worker, or an entry is not plain values: written here
        _write_here(own, root, cache, now)
        if back is not None:
            os.close(back)
    else:
        left = replace(own, checked=[], pending=list(own.pending), gone=list(own.gone))
        _sending = threading.Thread(target=_send, args=(back, frame, left, root, now), name="kin-entries")
        _sending.start()
    own.pending, own.gone = [], []


def _send(back: int, frame: bytes, own: CachedCheck, root: Path, now: float) -> None:
    try:
        send_frame(back, frame)
    except OSError:  # the worker is gone: written here after all
        _write_here(own, root, None, now)
    finally:
        os.close(back)


def _write_here(own: CachedCheck, root: Path, cache, now: float) -> None:
    from .findings import FindingsCache

    writer = cache if cache is not None else FindingsCache.open(root)
    own.write_back(writer, now)
    if cache is None and writer is not None:
        writer.close()


def take_over(back: int, deadline: float, variant: str, cache: FindingsCache | None, now: float) -> None:
    """In the first worker, after it answered: the caller's entries (of the same `variant`) written when
    it hands them over (none when the caller wrote them itself, its end closed first, or sent them
    short)."""
    from .checked import CachedCheck
    from .findings import Entry

    try:
        handed = _frame(back, deadline)
        if handed is not None:
            entries, gone = handed
            CachedCheck([], 0, variant, [Entry(*e) for e in entries], gone=gone).write_back(cache, now)
    finally:
        os.close(back)


def _frame(fd: int, deadline: float) -> Any:
    try:
        size = HEADER.unpack(read_exact(fd, HEADER.size, deadline))[0]
        return marshal.loads(read_exact(fd, size, deadline))
    except (EOFError, TimeoutError, OSError, ValueError):
        return None


def close_after_writers(cache: FindingsCache) -> None:
    """Close the caller's connection to the findings cache, once no worker writes. A forked worker's
    connection shares what SQLite knows of the file's locks with the one it inherited, so it holds
    none of its own in the kernel's eyes: closed while the worker still writes, the caller's would be
    taken for the last one, and its checkpoint would reset the log under the worker's commits."""
    if _sending is None and not _still_writing:
        cache.close()
    else:
        _closing.append(cache)


def join_writers() -> None:
    """Wait until the workers of the last split check have written what they write and ended: from then
    on the findings cache holds every file that check read."""
    global _sending
    if _sending is not None:
        _sending.join()
        _sending = None
    while _still_writing:
        reap(_still_writing.pop(), kill=False)
    while _closing:
        _closing.pop().close()


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
