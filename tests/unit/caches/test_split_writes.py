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


def _hand(root: Path, ctx: Context, own: CachedCheck, back: int | None, worker=None) -> None:
    """The caller's side: its entries handed over on `back` (with `worker` taking them meanwhile)."""
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        writing.hand_over(back, own, root, cache, ctx.now)
        assert own.pending == []  # the caller has nothing left to write
        taker = threading.Thread(target=worker) if worker is not None else None
        if taker is not None:
            taker.start()
        writing.join_writers()
        if taker is not None:
            taker.join()
    finally:
        cache.close()


def _take(root: Path, ctx: Context, theirs: CachedCheck, read_end: int) -> None:
    """The first worker's side (its own connection): its own entries before it answers, then the
    caller's."""
    connection = FindingsCache.open(root)
    theirs.write_back(connection, ctx.now)
    writing.take_over(read_end, time.monotonic() + 30, theirs.variant, connection, ctx.now)
    if connection is not None:
        connection.close()


def test_the_first_worker_writes_both_shards_entries(tmp_path: Path) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, theirs = _checked(root, ctx)
    assert own.pending and theirs.pending
    read_end, write_end = os.pipe()
    _hand(root, ctx, own, write_end, worker=lambda: _take(root, ctx, theirs, read_end))  # in a thread here
    assert len(_rows(root)) == 6


def test_entries_nobody_can_take_are_written_by_the_caller(tmp_path: Path) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, _ = _checked(root, ctx)
    _hand(root, ctx, own, None)
    assert len(_rows(root)) == 3


def test_a_worker_whose_caller_closed_its_end_writes_its_own_entries(tmp_path: Path) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    _, theirs = _checked(root, ctx)
    read_end, write_end = os.pipe()
    os.close(write_end)  # the caller wrote its entries itself and handed nothing
    _take(root, ctx, theirs, read_end)
    assert len(_rows(root)) == 3


def test_entries_a_worker_never_reads_are_written_by_the_caller(tmp_path: Path) -> None:
    """The worker died after it answered: the frame cannot be sent, and the caller writes its own."""
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, _ = _checked(root, ctx)
    read_end, write_end = os.pipe()
    os.close(read_end)
    _hand(root, ctx, own, write_end)
    assert len(_rows(root)) == 3
