"""The prompt block's listing in a process that watches the store (the MCP server) takes in only what the
watch reported since the last read, without a stat of every file, and is at every step what a full pass
over the store lists: files created, changed, deleted and renamed, folders made, moved and removed (one
named like a memory file too), MEMORY.md written and removed, a link out of the store, the hidden folder's
churn. When the watch cannot vouch, the read is the full pass."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from kin_memory.mcp import listed as listed_module
from kin_memory.mcp.listed import Listed
from kin_memory.store.disk_changes import SharedWatch

FACT = "---\ncategory: project-fact\nworkspace: {ws}\n---\n# {title}\n\n{body}\n"


def fact(title: str, body: str = "Some text.", ws: str = "/srv/repo") -> str:
    return FACT.format(ws=ws, title=title, body=body)


def seen(listed: Listed) -> tuple[set[tuple], tuple[str, ...] | None]:
    memories, index = listed.now()
    rows = {(m.vpath, m.category, str(m.stamp), m.title, m.mtime, m.size) for m in memories}
    return rows, (index.lines if index is not None else None)


def full(root: Path) -> tuple[set[tuple], tuple[str, ...] | None]:
    return seen(Listed(root))  # a process's first read: the full pass


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    for n in range(5):
        (root / "facts" / f"f{n}.md").write_text(fact(f"Fact {n}"))
    (root / "MEMORY.md").write_text("# Index\n")
    return root


@pytest.fixture
def watched(root: Path):
    shared = SharedWatch(root)
    yield Listed(root, shared)
    shared.stop()


def test_a_watched_read_lists_no_folder_and_stats_no_unchanged_file(root, watched, monkeypatch) -> None:
    assert seen(watched) == full(root)
    calls = {"scan": 0, "stat": 0}
    real_scan, real_key = listed_module.scan_names, listed_module.key_at

    def scan(*a, **k):
        calls["scan"] += 1
        return real_scan(*a, **k)

    def key(*a, **k):
        calls["stat"] += 1
        return real_key(*a, **k)

    monkeypatch.setattr(listed_module, "scan_names", scan)
    monkeypatch.setattr(listed_module, "key_at", key)
    (root / "facts" / "f1.md").write_text(fact("Fact one, renamed"))
    (root / "facts" / "new.md").write_text(fact("New"))  # no pause: the next read must see both
    rows, _ = seen(watched)
    assert calls == {"scan": 0, "stat": 0}
    titles = {r[3] for r in rows}
    assert {"Fact one, renamed", "New"} <= titles and "Fact 1" not in titles
    monkeypatch.undo()
    assert (rows, seen(watched)[1]) == full(root)


def test_every_step_of_a_random_history_lists_what_a_full_pass_lists(
    root: Path, watched, tmp_path, monkeypatch
) -> None:
    passes: list[Listed] = []
    real_pass = Listed._full_pass
    monkeypatch.setattr(Listed, "_full_pass", lambda self: passes.append(self) or real_pass(self))
    outside = tmp_path / "outside.md"
    outside.write_text(fact("Outside"))
    rnd = random.Random(4)
    assert seen(watched) == full(root)

    def files() -> list[Path]:
        return sorted(p for p in root.rglob("*.md") if ".kin-index" not in p.parts and p.name != "MEMORY.md")

    def folders() -> list[Path]:
        return sorted(
            p
            for p in root.rglob("*")
            if p.is_dir() and not p.is_symlink() and p != root and ".kin-index" not in p.parts
        )

    steps = [
        lambda n: (root / "facts" / f"n{n}.md").write_text(fact(f"New {n}")),
        lambda n: files() and rnd.choice(files()).write_text(fact(f"Changed {n}", ws="/srv/other")),
        lambda n: files() and rnd.choice(files()).unlink(),
        lambda n: files() and os.rename(rnd.choice(files()), root / "facts" / f"moved{n}.md"),
        lambda n: (
            (root / f"team{n}" / "deep").mkdir(parents=True)
            or (root / f"team{n}" / "deep" / "t.md").write_text(fact(f"Team {n}"))
        ),
        lambda n: folders() and os.rename(rnd.choice(folders()), root / f"renamed{n}"),
        lambda n: folders() and shutil.rmtree(rnd.choice(folders())),
        lambda n: (root / "MEMORY.md").write_text(f"# Index\n\n- step {n}\n"),
        lambda n: (root / "MEMORY.md").unlink(missing_ok=True),
        lambda n: (
            (root / "odd.md" / "inner").mkdir(parents=True, exist_ok=True)
            or (root / "odd.md" / "inner" / f"i{n}.md").write_text(fact(f"Inner {n}"))
        ),
        lambda n: (root / f"link{n}.md").symlink_to(outside),
        lambda n: (
            (root / ".kin-index").mkdir(exist_ok=True) or (root / ".kin-index" / "x.md").write_text("x")
        ),
        lambda n: (root / "facts" / f"notes{n}.txt").write_text("not a memory"),
    ]
    for n in range(60):
        if not (root / "facts").is_dir():
            (root / "facts").mkdir()
        rnd.choice(steps)(n)
        assert seen(watched) == full(root), f"step {n}"
    assert passes.count(watched) == 1  # the first read only: every later one took in what the watch said


def test_without_a_watch_that_vouches_the_read_is_the_full_pass(root: Path, monkeypatch) -> None:
    from kin_memory.store.disk_changes import DiskChanges

    monkeypatch.setattr(DiskChanges, "flush", lambda self: None)
    shared = SharedWatch(root)
    try:
        listed = Listed(root, shared)
        assert seen(listed) == full(root)
        (root / "facts" / "late.md").write_text(fact("Late"))
        assert "Late" in {r[3] for r in seen(listed)[0]}
    finally:
        shared.stop()


def test_a_folder_named_like_the_index_is_listed_as_a_full_pass_lists_it(root: Path, watched) -> None:
    assert seen(watched) == full(root)
    (root / "MEMORY.md").unlink()
    (root / "MEMORY.md").mkdir()  # the scan walks a folder of that name like any other
    (root / "MEMORY.md" / "inside.md").write_text(fact("Inside"))
    rows, index = seen(watched)
    assert index is None and "Inside" in {r[3] for r in rows}
    assert (rows, index) == full(root)
    shutil.rmtree(root / "MEMORY.md")
    (root / "MEMORY.md").write_text("# Index again\n")
    assert seen(watched) == full(root)
