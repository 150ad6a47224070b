"""The first `kin-memory check` split across forked processes reports exactly what one process reports:
the same text, the same JSON, the same exit code and the same findings cache left for the next run."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from kin_memory.caches import sharded
from kin_memory.caches.findings import DB_NAME
from kin_memory.cli import main
from kin_memory.store import context
from kin_memory.store.paths import HIDDEN_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from bench.generate import generate  # noqa: E402

FILES = 1_500  # above SHARDED_MIN_FILES: an unforced first check of this store is split on 2 cores


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    store = generate(FILES, seed=11, cache=tmp_path_factory.mktemp("bench"), log=lambda *_: None)
    # Entries the scan skips (KM900), joined with the workers' output by the parent.
    (store.root / "projects" / "a-folder.md").mkdir()
    (store.root / "projects" / "out-of-the-store.md").symlink_to(store.alpha / "elsewhere.md")
    (store.alpha / "elsewhere.md").write_text("---\ncategory: preference\n---\nnot in the store\n")
    return store


def _drop_cache(root: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        (root / HIDDEN_DIR / (DB_NAME + suffix)).unlink(missing_ok=True)


def _entries(root: Path) -> list[tuple]:
    conn = sqlite3.connect(root / HIDDEN_DIR / DB_NAME)
    try:
        return conn.execute(
            "SELECT variant, vpath, key, since, valid_until, probe, record, payload FROM entries ORDER BY vpath"
        ).fetchall()
    finally:
        conn.close()


def _check(store, fmt: str, workers: str, capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setenv("KIN_MEMORY_WORKERS", workers)
    capsys.readouterr()
    rc = main(["check", "--root", str(store.root), "--format", fmt])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_sharded_first_check_reports_what_one_process_reports(store, fmt, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(store.base / "home"))
    monkeypatch.chdir(store.alpha)
    frozen = time.time()  # lifecycle messages ("expires … in 9 hours") must not move between the runs
    monkeypatch.setattr(time, "time", lambda: frozen)
    real_context = context.cli_context
    monkeypatch.setattr(context, "cli_context", lambda *a: dataclasses.replace(real_context(*a), now=frozen))
    forked: list = []
    real = sharded.check_sharded

    def spied(*args, **kwargs):
        answer = real(*args, **kwargs)
        forked.append(answer is not None)
        return answer

    monkeypatch.setattr(sharded, "check_sharded", spied)

    _drop_cache(store.root)
    one = _check(store, fmt, "0", capsys, monkeypatch)
    one_cache = _entries(store.root)
    assert forked == []  # KIN_MEMORY_WORKERS=0: one process
    _drop_cache(store.root)
    monkeypatch.delenv("KIN_MEMORY_WORKERS")
    many = _check(store, fmt, "", capsys, monkeypatch)
    many_cache = _entries(store.root)
    assert forked == [True]  # split across the forked workers, none of which failed

    assert one[0] == many[0] == 1  # the generated store has errors
    assert one[1].count("\n") > FILES // 2  # findings in many files
    assert one[1].count("KM900") == 2 if fmt == "text" else one[1].count('"KM900"') == 2
    assert many == one
    assert many_cache == one_cache and len(one_cache) == FILES
    # The next run answers from the summary the sharded run left, with the same output.
    assert _check(store, fmt, "", capsys, monkeypatch) == one
    assert forked == [True]


def test_a_store_the_cache_answers_is_checked_in_one_process(store) -> None:
    assert sharded.workers_for(FILES, cold=False) == 1
    assert sharded.workers_for(sharded.SHARDED_MIN_FILES - 1, cold=True) == 1


def test_a_worker_that_fails_leaves_the_check_to_one_process(store, monkeypatch) -> None:
    from kin_memory.cli.check import cache_payload
    from kin_memory.store.context import Context

    def broken(*args, **kwargs):
        raise RuntimeError("a worker's check failed")

    monkeypatch.setattr("kin_memory.caches.checked.check_files", broken)
    files = [(str(p), "/memories/" + p.relative_to(store.root).as_posix()) for p in store.root.rglob("*.md")]
    assert sharded.check_sharded(files, Context(root=store.root), "cli", cache_payload, store.root, 2) is None
    from kin_memory.caches import writing

    assert writing._still_writing == []  # the workers and the caller's Writer ended, none left behind


@pytest.mark.parametrize("count", [2, 3, 4])
def test_the_shards_hold_every_file_once_and_some_of_every_folder(count: int) -> None:
    files = [
        (f"/s/{folder}/{n}.md", f"/memories/{folder}/{n}.md") for folder in "abcdefgh" for n in range(500)
    ]
    shards = [sharded.shard_files(files, (index, count)) for index in range(count)]
    assert sorted(f for shard in shards for f in shard) == sorted(files)
    assert len(shards[0]) == round(len(files) / count * sharded.CALLER_SHARE)
    assert max(len(s) for s in shards[1:]) - min(len(s) for s in shards[1:]) <= 1
    for shard in shards:  # dealt out, not cut: each share holds files of every folder
        assert {path.split("/")[2] for path, _ in shard} == set("abcdefgh")


def test_a_workers_answer_comes_back_as_it_was_sent() -> None:
    """Plain rows travel marshalled, an odd file's memory pickled beside them, and an answer holding
    anything marshal cannot write is pickled whole: each comes back equal to what was sent."""
    from kin_memory.store.memory import from_text

    odd = from_text("/s/x.md", "/memories/x.md", "---\nworkspace: 2024-01-01\n---\nbody\n", 1.0, 34)
    rows = [
        ("/memories/a.md", b'[["KM400"]]', ["project-fact", None, "/r", None, False, "ok", 0, 2, 3, "A"],
         float("inf"), "/s/a.md", 1.5, 10, -(2**62), None),
        ("/memories/x.md", b"", None, 2.5, "/s/x.md", 1.0, 34, 7, odd),
        ("/memories/\udcff.md", b"", ["session", "session", None, None, False, "ok", 0, 2, 3, "\ud800"],
         3.0, "/s/\udcff.md", 2.0, 5, 1, None),
    ]  # fmt: skip
    flat = (rows, 1, "variant", 2.5, {"/r": "probe"})
    made = [("/memories/a.md", 3.0, "a:1:1: KM400 warning: old\n", ["warning"], [["KM400"]], ["fact", 1.5])]
    answer = b"".join(sharded._answer(flat, made))
    assert answer[:1] == b"M"
    assert sharded._answered(answer) == (flat, made)
    unplain = (rows, 1, "variant", 2.5, {"/r": Path("/r")})
    answer = b"".join(sharded._answer(unplain, made))
    assert answer[:1] == b"P"
    assert sharded._answered(answer) == (unplain, made)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory):
    """A store the scan finds nothing odd in: its check leaves a summary."""
    return generate(FILES, seed=12, cache=tmp_path_factory.mktemp("plain"), log=lambda *_: None)


@pytest.mark.parametrize("workers", ["0", ""])
def test_a_first_check_stats_nothing_ahead_and_its_summary_answers_the_next(
    plain, workers, capsys, monkeypatch
) -> None:
    """With nothing in the findings cache no file is stat'ed before it is read (MEMORY.md, read apart,
    is the one stat), and the summary keyed afterwards from the readings answers the next run whole:
    it checks no file and stats each once."""
    store = plain
    from kin_memory.caches import checked
    from kin_memory.cli import check as cli_check
    from kin_memory.store import freshness

    monkeypatch.setenv("HOME", str(store.base / "home"))
    monkeypatch.chdir(store.alpha)
    frozen = time.time()  # no lifecycle message may age between the runs (that file is checked again)
    monkeypatch.setattr(time, "time", lambda: frozen)
    real_context = context.cli_context
    monkeypatch.setattr(context, "cli_context", lambda *a: dataclasses.replace(real_context(*a), now=frozen))
    stats: list[str] = []
    real_seen_at = freshness.seen_at

    def counted(path):
        stats.append(str(path))
        return real_seen_at(path)

    monkeypatch.setattr(freshness, "seen_at", counted)
    monkeypatch.setattr(checked, "seen_at", counted)
    checks: list[int] = []
    real_check = cli_check.check_through_cache
    monkeypatch.setattr(
        cli_check, "check_through_cache", lambda *a, **k: checks.append(1) or real_check(*a, **k)
    )

    _drop_cache(store.root)
    first = _check(store, "text", workers, capsys, monkeypatch)
    assert checks == [1]
    assert stats == [str(store.root / "MEMORY.md")]
    assert len(_entries(store.root)) == FILES  # the workers' entries are written when the check returns
    stats.clear()
    second = _check(store, "text", workers, capsys, monkeypatch)
    assert second == first
    assert checks == [1]  # answered from the summary
    assert len(stats) == FILES + 1


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_program_ends_with_everything_printed_and_written(plain, fmt, capsys, monkeypatch) -> None:
    """`python -m kin_memory check` ends its process without the interpreter's teardown: what it prints
    through a pipe (some hundred kilobytes), its exit code and the findings cache it leaves are what
    main() in this process makes of the same store."""
    import subprocess

    store = plain
    monkeypatch.setenv("HOME", str(store.base / "home"))
    monkeypatch.chdir(store.alpha)
    monkeypatch.delenv("KIN_MEMORY_WORKERS", raising=False)
    _drop_cache(store.root)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a pipe's stdout is buffered
    ran = subprocess.run(
        [sys.executable, "-m", "kin_memory", "check", "--root", str(store.root), "--format", fmt],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    entries = _entries(store.root)
    assert len(entries) == FILES
    assert len(ran.stdout) > 100_000
    rc = main(["check", "--root", str(store.root), "--format", fmt])  # answered from the summary
    out, err = capsys.readouterr()
    assert (ran.returncode, ran.stdout, ran.stderr) == (rc, out, err)
