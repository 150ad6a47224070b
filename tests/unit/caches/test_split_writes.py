"""The writes of a split check (caches/writing.py): the first worker writes the caller's entries with its
own; what it cannot take the caller writes itself."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from kin_memory.caches import writing
from kin_memory.caches.checked import CachedCheck, check_files
from kin_memory.caches.findings import DB_NAME, FindingsCache
from kin_memory.store.context import Context
from kin_memory.store.paths import HIDDEN_DIR
from kin_memory.store.store import scan
from support.memfiles import memory, write


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    for n in range(6):
        write(root, f"notes/n{n}.md", memory("preference", f"# N{n}\n\nnote {n}\n"))
    return root


def _checked(root: Path, ctx: Context) -> tuple[CachedCheck, CachedCheck]:
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        files = [(p, v) for p, v, is_index in scan(root)[0] if not is_index]
        halves = []
        for half in (files[::2], files[1::2]):
            done = check_files(half, ctx, "test", lambda m, f: b"", cache, stats={})
            assert done is not None
            halves.append(done)
        return halves[0], halves[1]
    finally:
        cache.close()


def _rows(root: Path) -> list[str]:
    conn = sqlite3.connect(root / HIDDEN_DIR / DB_NAME)
    try:
        return [v for (v,) in conn.execute("SELECT vpath FROM entries ORDER BY vpath")]
    finally:
        conn.close()


def test_the_first_worker_writes_both_shards_entries(tmp_path: Path) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, theirs = _checked(root, ctx)
    assert own.pending and theirs.pending
    read_end, write_end = os.pipe()
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        writing.hand_over(write_end, own, root, cache, ctx.now)
        assert own.pending == []  # the caller has nothing left to write

        # The worker's side, in a thread here (its own connection): the frame, then the pipe's end.
        def worker() -> None:
            connection = FindingsCache.open(root)
            writing.take_over(read_end, time.monotonic() + 30, theirs, connection, ctx.now)
            if connection is not None:
                connection.close()

        taker = threading.Thread(target=worker)
        taker.start()
        writing.join_writers()
        taker.join()
    finally:
        cache.close()
    assert len(_rows(root)) == 6


def test_entries_nobody_can_take_are_written_by_the_caller(tmp_path: Path) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, _ = _checked(root, ctx)
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        writing.hand_over(None, own, root, cache, ctx.now)
        assert own.pending == []
    finally:
        cache.close()
    assert len(_rows(root)) == 3


def test_a_worker_whose_caller_closed_its_end_writes_its_own_entries(tmp_path: Path) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    _, theirs = _checked(root, ctx)
    read_end, write_end = os.pipe()
    os.close(write_end)  # the caller wrote its entries itself and handed nothing
    worker = FindingsCache.open(root)
    writing.take_over(read_end, time.monotonic() + 30, theirs, worker, ctx.now)
    if worker is not None:
        worker.close()
    assert len(_rows(root)) == 3


def test_entries_a_worker_never_reads_are_written_by_the_caller(tmp_path: Path) -> None:
    """The worker died after it answered: the frame cannot be sent, and the caller writes its own."""
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, _ = _checked(root, ctx)
    read_end, write_end = os.pipe()
    os.close(read_end)
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        writing.hand_over(write_end, own, root, cache, ctx.now)
        writing.join_writers()
    finally:
        cache.close()
    assert len(_rows(root)) == 3
