"""The writes of a split check the caller does not wait for (caches/writing.py): its entries are written
by its Writer, a process forked before the check and handed them once they are made (by the caller
itself when none can be made or told), and its connection stays open until that process is done."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def _cache(root: Path) -> Iterator[FindingsCache]:
    """The caller's connection to the findings cache, closed after."""
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        yield cache
    finally:
        cache.close()


def _checked(root: Path, ctx: Context) -> tuple[CachedCheck, CachedCheck]:
    with _cache(root) as cache:
        files = [(p, v) for p, v, is_index in scan(root)[0] if not is_index]
        halves = []
        for half in (files[::2], files[1::2]):
            done = check_files(half, ctx, "test", lambda m, f: b"", cache, stats={})
            assert done is not None
            halves.append(done)
        return halves[0], halves[1]


def _rows(root: Path) -> list[str]:
    conn = sqlite3.connect(root / HIDDEN_DIR / DB_NAME)
    try:
        return [v for (v,) in conn.execute("SELECT vpath FROM entries ORDER BY vpath")]
    finally:
        conn.close()


def test_the_callers_entries_are_written_by_its_writer(tmp_path: Path, monkeypatch) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    forked: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    writer = writing.Writer.fork(root, ctx.now)  # before the check, as a split check forks it
    assert writer is not None and forked == [writer.pid]
    own, _ = _checked(root, ctx)
    with _cache(root) as cache:
        writing.hand_over(writer, own, root, cache, ctx.now)
        assert own.pending == []  # the caller has nothing left to write
        assert cache.conn.total_changes == 0  # and wrote nothing itself
        writing.join_writers()
    assert len(_rows(root)) == 3


def test_a_writer_told_nothing_ends_without_writing(tmp_path: Path) -> None:
    root = _store(tmp_path)
    writer = writing.Writer.fork(root, Context(root=root).now)
    assert writer is not None
    writer.let_go()
    _, status = os.waitpid(writer.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    writing._still_writing.remove(writer.pid)
    assert _rows(root) == []


def test_entries_no_process_can_be_made_for_are_written_by_the_caller(tmp_path: Path, monkeypatch) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    own, _ = _checked(root, ctx)

    def no_fork() -> int:
        raise OSError("no more processes")

    monkeypatch.setattr(os, "fork", no_fork)
    writer = writing.Writer.fork(root, ctx.now)
    assert writer is None
    with _cache(root) as cache:
        writing.hand_over(writer, own, root, cache, ctx.now)
        assert own.pending == []
    assert len(_rows(root)) == 3


def test_entries_the_writer_cannot_be_told_are_written_by_the_caller(tmp_path: Path, monkeypatch) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    writer = writing.Writer.fork(root, ctx.now)
    assert writer is not None
    own, _ = _checked(root, ctx)

    def broken(*args: object) -> None:
        raise OSError("no room left")

    monkeypatch.setattr(writing, "leave", broken)
    with _cache(root) as cache:
        writing.hand_over(writer, own, root, cache, ctx.now)
        assert own.pending == [] and cache.conn.total_changes > 0  # written here
        writing.join_writers()  # the writer, told nothing, ended
    assert len(_rows(root)) == 3


def test_a_stopped_writer_is_ended_and_forgotten(tmp_path: Path) -> None:
    root = _store(tmp_path)
    writer = writing.Writer.fork(root, Context(root=root).now)
    assert writer is not None
    writer.stop()  # the split failed: the caller checks and writes everything itself
    assert writer.pid not in writing._still_writing
    with pytest.raises(ChildProcessError):
        os.waitpid(writer.pid, os.WNOHANG)  # reaped already


def test_the_callers_connection_is_closed_once_its_writers_are_done(tmp_path: Path) -> None:
    root = _store(tmp_path)
    ctx = Context(root=root)
    writer = writing.Writer.fork(root, ctx.now)
    own, _ = _checked(root, ctx)
    cache = FindingsCache.open(root)
    assert cache is not None
    writing.hand_over(writer, own, root, cache, ctx.now)
    writing.close_after_writers(cache)
    cache.conn.execute("SELECT 1")  # still open: a writer may still be writing
    writing.join_writers()
    with pytest.raises(sqlite3.ProgrammingError):
        cache.conn.execute("SELECT 1")
    assert len(_rows(root)) == 3
