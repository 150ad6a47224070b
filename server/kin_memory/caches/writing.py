"""The writes of a split first check, left to its first worker.

A worker answers first, then writes: the caller goes on with the answers (merging, listing, printing)
while the worker's core, idle otherwise, writes the new entries of every shard (its own at once, the
caller's when it hands them over), then the whole check's summary when the caller hands it over too. The
caller never waits on the findings cache's write lock, and waits for the writer only at the end
(join_writers), after its output. Whatever cannot be handed over is written by the caller itself.

Frames on the pipe from the caller to its first worker: its entries and files gone (marshalled plain
values), then optionally the summary; the pipe's end says there is nothing more.
"""

from __future__ import annotations

import marshal
import os
import threading
from typing import TYPE_CHECKING, Any

from .frames import HEADER, read_exact, send_frame

if TYPE_CHECKING:
    from pathlib import Path

    from .checked import CachedCheck
    from .findings import FindingsCache

Summary = tuple[str, float, float, dict[str, str], bytes]  # FindingsCache.put_summary's arguments

_still_writing: list[int] = []  # workers of a split check that answered and are writing
_handing: int | None = None  # the caller's end of the pipe to the worker that writes its entries
_sending: threading.Thread | None = None  # the summary on its way to that worker
_closing: list[FindingsCache] = []  # the caller's connections, closed once its writers are done


def still_writing(pids: list[int]) -> None:
    _still_writing.extend(pids)


def hand_over(back: int | None, own: CachedCheck, root: Path, cache, now: float) -> bool:
    """The caller's new entries (and files gone) to the first worker (`back`, its pipe), which writes
    them with its own; written here when it cannot take them. The caller's check then has none left
    to write. True when handed over: the pipe is kept for the summary (see hand_summary)."""
    global _handing
    try:
        if back is None:
            raise OSError("no worker to hand the entries to")
        send_frame(back, marshal.dumps(([tuple(e) for e in own.pending], own.gone)))
        _handing = back
        handed = True
    except (OSError, ValueError):  # the worker is gone, or an entry is not plain values: written here
        from .findings import FindingsCache

        writer = cache if cache is not None else FindingsCache.open(root)
        own.write_back(writer, now)
        if cache is None and writer is not None:
            writer.close()
        handed = False
    own.pending, own.gone = [], []
    return handed


def take_over(
    back: int, deadline: float, checked: CachedCheck, cache: FindingsCache | None, now: float
) -> None:
    """In the first worker, after it answered: its own entries written at once (while the caller reads
    the answers), then the caller's when it hands them over, then the summary when it hands one over.
    Only its own when the caller wrote them itself (its end closed first) or sent them short."""
    from .findings import Entry

    try:
        checked.write_back(cache, now)
        handed = _frame(back, deadline)
        if handed is not None:
            entries, gone = handed
            checked.pending, checked.gone = [Entry(*e) for e in entries], gone
            checked.write_back(cache, now)
        summary = _frame(back, deadline) if handed is not None else None
        if summary is not None and cache is not None:
            cache.put_summary(*summary)
    finally:
        os.close(back)


def _frame(fd: int, deadline: float) -> Any:
    try:
        size = HEADER.unpack(read_exact(fd, HEADER.size, deadline))[0]
        return marshal.loads(read_exact(fd, size, deadline))
    except (EOFError, TimeoutError, OSError, ValueError):
        return None


def hand_summary(summary: Summary) -> bool:
    """The check's summary to the worker writing the entries, sent from a thread (the worker reads it
    once the entries are written; the caller prints meanwhile); False when there is no such worker."""
    global _sending
    if _handing is None or _sending is not None:
        return False
    try:
        frame = marshal.dumps(summary)
    except ValueError:
        return False
    fd = _handing
    _sending = threading.Thread(target=_send_quietly, args=(fd, frame), name="kin-summary")
    _sending.start()
    return True


def _send_quietly(fd: int, frame: bytes) -> None:
    try:
        send_frame(fd, frame)
    except OSError:  # the worker is gone: the next check makes the summary again
        pass


def close_after_writers(cache: FindingsCache) -> None:
    """Close the caller's connection to the findings cache, once no worker writes. A forked worker's
    connection shares what SQLite knows of the file's locks with the one it inherited, so it holds
    none of its own in the kernel's eyes: closed while the worker still writes, the caller's would be
    taken for the last one, and its checkpoint would reset the log under the worker's commits."""
    if _handing is None and _sending is None and not _still_writing:
        cache.close()
    else:
        _closing.append(cache)


def join_writers() -> None:
    """Wait until the workers of the last split check have written what they write and ended: from then
    on the findings cache holds every file that check read (and its summary, when one was handed)."""
    global _handing, _sending
    if _sending is not None:
        _sending.join()
        _sending = None
    if _handing is not None:
        os.close(_handing)  # nothing more: the worker ends once it wrote what it has
        _handing = None
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
