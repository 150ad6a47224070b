"""The writes of a split check the caller does not wait for (caches/writing.py): its entries are written
by a process forked for them (by the caller itself when none can be made), and its connection stays
open until that process is done."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

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


def test_the_callers_entries_are_written_by_a_process_of_their_own(tmp_path: Path, monkeypatch) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, _ = _checked(root, ctx)
    forked: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        writing.write_apart(own, root, cache, ctx.now)
        assert len(forked) == 1 and own.pending == []  # the caller has nothing left to write
        writing.join_writers()
    finally:
        cache.close()
    assert len(_rows(root)) == 3


def test_entries_no_process_can_be_made_for_are_written_by_the_caller(tmp_path: Path, monkeypatch) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, _ = _checked(root, ctx)

    def no_fork() -> int:
        raise OSError("no more processes")

    monkeypatch.setattr(os, "fork", no_fork)
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        writing.write_apart(own, root, cache, ctx.now)
        assert own.pending == []
    finally:
        cache.close()
    assert len(_rows(root)) == 3


def test_the_callers_connection_is_closed_once_its_writers_are_done(tmp_path: Path) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, _ = _checked(root, ctx)
    cache = FindingsCache.open(root)
    assert cache is not None
    writing.write_apart(own, root, cache, ctx.now)
    writing.close_after_writers(cache)
    cache.conn.execute("SELECT 1")  # still open: a writer may still be writing
    writing.join_writers()
    with pytest.raises(sqlite3.ProgrammingError):
        cache.conn.execute("SELECT 1")
    assert len(_rows(root)) == 3
