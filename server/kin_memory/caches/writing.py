"""The writes of a split first check that the caller does not wait for.

Each worker writes its own new entries after it answers, while the caller still checks its own (a little
more) files. The caller's entries are written by a process forked for that once it has every answer: it
holds them already (nothing is encoded or sent), writes them through its own connection while the caller
goes on with the answers (merging, listing, printing), and the caller waits for it only at the end
(join_writers), after its output. When no such process can be made, the caller writes them itself.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from .checked import CachedCheck
    from .findings import FindingsCache

_still_writing: list[int] = []  # processes of a split check that are writing the findings cache
_closing: list[FindingsCache] = []  # the caller's connections, closed once its writers are done


def still_writing(pids: list[int]) -> None:
    _still_writing.extend(pids)


def write_apart(own: CachedCheck, root: Path, cache, now: float) -> None:
    """The caller's new entries (and files gone), written by a forked process of their own (or here when
    none can be made). The caller's check then has none left to write."""
    if own.pending or own.gone:
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:  # the writer: never returns
            code = 1
            try:
                from .findings import FindingsCache

                writer = FindingsCache.open(root)  # its own: the caller's is not used across a fork
                if writer is not None:
                    writer.without_syncs()
                own.write_back(writer, now)
                code = 0
            finally:
                os._exit(code)
        if pid > 0:
            _still_writing.append(pid)
        else:
            _write_here(own, root, cache, now)
    own.pending, own.gone = [], []


def _write_here(own: CachedCheck, root: Path, cache, now: float) -> None:
    from .findings import FindingsCache

    writer = cache if cache is not None else FindingsCache.open(root)
    own.write_back(writer, now)
    if cache is None and writer is not None:
        writer.close()


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
