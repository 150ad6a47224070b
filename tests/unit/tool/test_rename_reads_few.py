"""A rename finds the references to follow from the recall index: with an index, only MEMORY.md, the
memories whose indexed body holds the path's words and those changed since the index saw them are read,
and every reference still follows (one written after the index, too). Without an index every memory is
looked at, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from kin_memory.recall.service import Recall, sync_quietly
from kin_memory.tool import relink
from kin_memory.tool.commands import run

FACT = "---\ncategory: project-fact\n---\n"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Index\n\n- [Build](facts/build.md)\n")
    (root / "facts" / "build.md").write_text(FACT + "Build with make.\n")
    (root / "facts" / "deploy.md").write_text(FACT + "Deploy after /memories/facts/build.md passes.\n")
    for n in range(40):
        (root / "facts" / f"other{n}.md").write_text(FACT + f"Unrelated fact {n} about the build.\n")
    return root


def test_with_an_index_a_rename_reads_only_what_may_mention_the_path(store: Path, monkeypatch) -> None:
    sync_quietly(Recall(store))
    late = store / "facts" / "late.md"  # written after the index: not seen by it, so read
    late.write_text(FACT + "Also see /memories/facts/build.md.\n")
    looked: list[str] = []
    real = relink._names
    monkeypatch.setattr(
        relink, "_names", lambda path, needles: looked.append(path.name) or real(path, needles)
    )
    res = run(
        store,
        None,
        {"command": "rename", "old_path": "/memories/facts/build.md", "new_path": "/memories/facts/make.md"},
    )
    assert res["isError"] is False, res
    assert sorted(looked) == ["MEMORY.md", "deploy.md", "late.md", "make.md"]
    assert "/memories/facts/make.md" in (store / "facts" / "deploy.md").read_text()
    assert "/memories/facts/make.md" in late.read_text()
    assert "(facts/make.md)" in (store / "MEMORY.md").read_text()


def test_without_an_index_every_memory_is_looked_at(store: Path, monkeypatch) -> None:
    looked: list[str] = []
    real = relink._names
    monkeypatch.setattr(
        relink, "_names", lambda path, needles: looked.append(path.name) or real(path, needles)
    )
    run(
        store,
        None,
        {"command": "rename", "old_path": "/memories/facts/build.md", "new_path": "/memories/facts/make.md"},
    )
    assert len(looked) == 43
    assert "/memories/facts/make.md" in (store / "facts" / "deploy.md").read_text()
