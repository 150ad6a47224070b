"""A memory's age travels with it: a file brought in by a sync takes the mtime it had on the machine that
committed it, so a stale fact stays stale, an expired episode stays expired (and the sweep judges it the
same on both machines), and a memory merged from both sides takes the newer of the two."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from tests.support.gitrepos import isolate_git

from kin_memory.gitsync import engine
from kin_memory.store.lifecycle import Thresholds, lifecycle
from kin_memory.store.machine import rename_machine
from kin_memory.tool.sweep import disk_memories, plan_from

DAY = 86400.0


@pytest.fixture
def stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    isolate_git(tmp_path, monkeypatch)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    out = []
    for name in ("laptop", "desktop"):
        root = tmp_path / name
        (root / "facts").mkdir(parents=True)
        rename_machine(root, name)
        engine.sync(root, remote=str(remote))
        out.append(root)
    return out[0], out[1]


def aged(path: Path, text: str, days: float) -> float:
    path.write_text(text)
    when = time.time() - days * DAY
    os.utime(path, (when, when))
    return when


def test_a_stale_fact_and_an_expired_episode_keep_their_age(stores: tuple[Path, Path]) -> None:
    laptop, desktop = stores
    fact = aged(laptop / "facts" / "old.md", "---\ncategory: project-fact\n---\n# Old\n\nPort 80.\n", 200)
    (laptop / "episodes").mkdir()
    episode = aged(laptop / "episodes" / "e.md", "---\ncategory: episodic\n---\n# Done\n\nShipped.\n", 50)
    engine.sync(laptop)
    engine.sync(desktop)
    assert abs((desktop / "facts" / "old.md").stat().st_mtime - fact) < 0.01
    assert abs((desktop / "episodes" / "e.md").stat().st_mtime - episode) < 0.01
    now = time.time()
    t = Thresholds()
    assert lifecycle("project-fact", (desktop / "facts" / "old.md").stat().st_mtime, now, t).status == "stale"
    expired = [e.vpath for e in plan_from(disk_memories(desktop), now, t).expired]
    assert expired == ["/memories/episodes/e.md"]


def test_a_memory_merged_from_both_sides_takes_the_newer_time(stores: tuple[Path, Path]) -> None:
    laptop, desktop = stores
    base = "---\ncategory: project-fact\n---\n# Notes\n\nline one\n\nmiddle\n\nline three\n"
    aged(laptop / "facts" / "n.md", base, 30)
    engine.sync(laptop)
    engine.sync(desktop)
    older = aged(laptop / "facts" / "n.md", base.replace("line one", "line ONE"), 10)
    newer = aged(desktop / "facts" / "n.md", base.replace("line three", "line THREE"), 2)
    engine.sync(laptop)
    engine.sync(desktop)  # merges both edits
    text = (desktop / "facts" / "n.md").read_text()
    assert "line ONE" in text and "line THREE" in text
    engine.sync(laptop)
    assert (laptop / "facts" / "n.md").read_text() == text
    assert abs((laptop / "facts" / "n.md").stat().st_mtime - newer) < 0.01
    assert older < newer


@pytest.mark.parametrize("merger_is_newer", [True, False])
def test_a_merged_memory_has_the_same_newer_age_on_both_machines(
    stores: tuple[Path, Path], merger_is_newer: bool
) -> None:
    laptop, desktop = stores
    base = "---\ncategory: project-fact\n---\n# Notes\n\nline one\n\nmiddle\n\nline three\n"
    aged(laptop / "facts" / "n.md", base, 300)
    engine.sync(laptop)
    engine.sync(desktop)
    sent_days, merged_days = (200, 2) if merger_is_newer else (2, 200)
    aged(laptop / "facts" / "n.md", base.replace("line one", "line ONE"), sent_days)
    aged(desktop / "facts" / "n.md", base.replace("line three", "line THREE"), merged_days)
    newer = time.time() - 2 * DAY
    engine.sync(laptop)
    engine.sync(desktop)  # the desktop merges both edits
    engine.sync(laptop)
    text = (desktop / "facts" / "n.md").read_text()
    assert "line ONE" in text and "line THREE" in text and (laptop / "facts" / "n.md").read_text() == text
    times = [(root / "facts" / "n.md").stat().st_mtime for root in (laptop, desktop)]
    assert all(abs(t - newer) < 5 for t in times), times
    now, t = time.time(), Thresholds()
    assert {lifecycle("project-fact", m, now, t).status for m in times} == {"ok"}
