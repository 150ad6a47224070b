"""A rename in a process that watches the store (the MCP server) reads only the memories that may name the old
path: those the recall index lists as naming it (its references, sessions and text past the body's cap
included), those whose references it does not know, and what changed on disk since it was brought up to
date. It lists no folder and stats no other file, so it does not grow with the store, and every reference
still follows: one written by another process a moment before, one in a folder another process moved, one
in a row an earlier build wrote. When the watch cannot vouch, the rename looks at every file, as before."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from kin_memory.mcp.agents import AgentStore
from kin_memory.recall.peek import naming
from kin_memory.recall.service import Recall, sync_quietly
from kin_memory.store.memory import BODY_CAP
from kin_memory.tool import relink

FACT = "---\ncategory: project-fact\n---\n"
SESSION = "---\ncategory: session\n---\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "sessions").mkdir()
    (root / "MEMORY.md").write_text("# Index\n\n- [Build](facts/build.md)\n")
    (root / "facts" / "build.md").write_text(FACT + "Build with make.\n")
    (root / "facts" / "test.md").write_text(FACT + "Test with pytest.\n")
    (root / "facts" / "deploy.md").write_text(FACT + "Deploy after /memories/facts/build.md passes.\n")
    (root / "sessions" / "s1.md").write_text(SESSION + "We changed /memories/facts/build.md today.\n")
    tail = "x" * (BODY_CAP + 10)  # the reference past the indexed body's cap
    (root / "facts" / "long.md").write_text(FACT + tail + "\nSee /memories/facts/build.md.\n")
    for n in range(60):
        (root / "facts" / f"other{n}.md").write_text(FACT + f"Unrelated fact {n} about the build.\n")
    sync_quietly(Recall(root, semantic="off"))
    return root


@pytest.fixture
def agent(root: Path):
    store = AgentStore(root, watch=True)
    yield store
    store.close()


@pytest.fixture
def looked(monkeypatch) -> list[str]:
    """The files the rename opened to look for the old path; listing the store fails the test."""
    seen: list[str] = []
    real = relink._names
    monkeypatch.setattr(relink, "_names", lambda path, needles: seen.append(path.name) or real(path, needles))

    def no_listing(*_a, **_k):
        raise AssertionError("a watched rename listed the store")

    monkeypatch.setattr(relink, "scan_names", no_listing)
    return seen


def rename(agent: AgentStore, old: str, new: str) -> None:
    result = agent.tool({"command": "rename", "old_path": old, "new_path": new}, None)
    assert not result.is_error, result.content


def test_a_watched_rename_reads_only_what_names_the_path(root: Path, agent: AgentStore, looked) -> None:
    rename(agent, "/memories/facts/build.md", "/memories/facts/make.md")
    assert sorted(looked) == ["MEMORY.md", "deploy.md", "long.md", "s1.md"]
    for name in ("facts/deploy.md", "sessions/s1.md", "facts/long.md"):
        text = (root / name).read_text()
        assert "/memories/facts/make.md" in text and "/memories/facts/build.md" not in text
    assert "(facts/make.md)" in (root / "MEMORY.md").read_text()


def test_a_reference_written_by_another_process_a_moment_before_follows(
    root: Path, agent: AgentStore, looked
) -> None:
    rename(agent, "/memories/facts/build.md", "/memories/facts/make.md")  # the watch's moment is set
    late = root / "facts" / "late.md"
    late.write_text(FACT + "Run /memories/facts/test.md first.\n")  # no pause: the rename must see it
    (root / "facts" / "other3.md").write_text(FACT + "Now also /memories/facts/test.md.\n")
    looked.clear()
    rename(agent, "/memories/facts/test.md", "/memories/facts/check.md")
    assert "/memories/facts/check.md" in late.read_text()
    assert "/memories/facts/check.md" in (root / "facts" / "other3.md").read_text()
    assert len(looked) < 10, looked


def test_a_folder_another_process_moved_is_read_whole(root: Path, agent: AgentStore, looked) -> None:
    (root / "team").mkdir()
    (root / "team" / "onboarding.md").write_text(FACT + "Start with /memories/facts/test.md.\n")
    rename(agent, "/memories/facts/build.md", "/memories/facts/make.md")  # the index holds team/
    os.rename(root / "team", root / "people")  # the index still says team/onboarding.md
    rename(agent, "/memories/facts/test.md", "/memories/facts/check.md")
    assert "/memories/facts/check.md" in (root / "people" / "onboarding.md").read_text()


def test_a_folder_rename_follows_references_below_it(root: Path, agent: AgentStore, looked) -> None:
    rename(agent, "/memories/facts", "/memories/kb")
    assert "/memories/kb/build.md" in (root / "sessions" / "s1.md").read_text()
    assert "(kb/build.md)" in (root / "MEMORY.md").read_text()


def test_rows_an_earlier_build_wrote_are_read_until_their_references_are_known(root: Path) -> None:
    db = root / ".kin-index" / "recall.sqlite3"
    with sqlite3.connect(db) as conn:  # what an index made before references were kept looks like
        conn.execute("UPDATE docs SET refs_read = 0")
        conn.execute("DELETE FROM refs")
    named, unknown = naming(root, "/memories/facts/build.md") or (set(), set())
    assert not named and "/memories/facts/deploy.md" in unknown
    sync_quietly(Recall(root, semantic="off"))  # read again once, rows and vectors kept
    named, unknown = naming(root, "/memories/facts/build.md") or (set(), set())
    assert unknown == set()
    assert named == {"/memories/facts/deploy.md", "/memories/sessions/s1.md", "/memories/facts/long.md"}


def test_any_writer_updating_a_rows_key_makes_its_references_unknown(root: Path) -> None:
    with sqlite3.connect(root / ".kin-index" / "recall.sqlite3") as conn:
        conn.execute("UPDATE docs SET key = key + 1 WHERE vpath = '/memories/facts/test.md'")
    _, unknown = naming(root, "/memories/facts/build.md") or (set(), set())
    assert unknown == {"/memories/facts/test.md"}


def test_without_a_watch_every_file_is_looked_at(root: Path, monkeypatch) -> None:
    from kin_memory.store.disk_changes import DiskChanges

    monkeypatch.setattr(DiskChanges, "flush", lambda self: None)  # the watch cannot vouch
    agent = AgentStore(root, watch=True)
    try:
        seen: list[str] = []
        real = relink._names
        monkeypatch.setattr(
            relink, "_names", lambda path, needles: seen.append(path.name) or real(path, needles)
        )
        (root / "facts" / "late.md").write_text(FACT + "Run /memories/facts/build.md first.\n")
        rename(agent, "/memories/facts/build.md", "/memories/facts/make.md")
    finally:
        agent.close()
    assert "late.md" in seen and "/memories/facts/make.md" in (root / "facts" / "late.md").read_text()
