"""The block composed for other agents (`memory://prompt-block`): MEMORY.md first, this workspace's
memories and the preferences before the rest, newest first, never past the caps, and a closing line that
says what the cap left out."""

from __future__ import annotations

import os
from pathlib import Path

from kin_memory.store.agent_block import compose_for_agents
from kin_memory.store.prompt_block import MAX_BYTES, MAX_LINES
from kin_memory.store.store import load_store

REPO = "/srv/repo-a"


def write(root: Path, name: str, category: str, stamp: str | None, age: int) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp_line = f"workspace: {stamp}\n" if stamp else ""
    path.write_text(f"---\ncategory: {category}\n{stamp_line}---\n# {name}\n")
    os.utime(path, (1_700_000_000 - age, 1_700_000_000 - age))


def block(root: Path, active: tuple[str, ...] = (REPO,)):
    store = load_store(root)
    return compose_for_agents(list(store.memories()), store.index_file(), active)


def test_this_workspace_and_preferences_come_first_newest_first(tmp_path):
    root = tmp_path / "m"
    write(root, "g/old-global.md", "project-fact", "global", 10)
    write(root, "g/new-global.md", "project-fact", "global", 1)
    write(root, "a/old-own.md", "project-fact", REPO, 30)
    write(root, "a/new-own.md", "episodic", REPO, 2)
    write(root, "p/pref.md", "preference", None, 20)
    write(root, "b/foreign.md", "project-fact", "/srv/repo-b", 0)
    write(root, "s/scratch.md", "session", None, 0)
    got = block(root)
    listed = [line.split(" ")[1] for line in got.text.split("\n") if line.startswith("- /memories/")]
    assert listed == [
        "/memories/a/new-own.md",
        "/memories/p/pref.md",
        "/memories/a/old-own.md",
        "/memories/g/new-global.md",
        "/memories/g/old-global.md",
    ]
    assert (got.listed, got.left_out, got.index_cut) == (5, 0, False)
    assert "foreign" not in got.text and "other workspaces" not in got.text


def test_one_left_out_is_said_in_the_singular(tmp_path):
    root = tmp_path / "m"
    for n in range(MAX_LINES):
        write(root, f"f/{n:03}.md", "project-fact", REPO, n)
    got = block(root)
    lines = got.text.split("\n")
    assert len(lines) == MAX_LINES
    assert got.left_out == MAX_LINES - got.listed
    noun = "memory" if got.left_out == 1 else "memories"
    assert (
        lines[-1]
        == f"- … {got.left_out} more {noun} not listed: find them with memory_search, or view /memories."
    )


def test_a_memory_md_past_the_cap_is_cut_and_said_so(tmp_path):
    root = tmp_path / "m"
    root.mkdir()
    write(root, "f/a.md", "project-fact", REPO, 0)
    (root / "MEMORY.md").write_text("".join(f"- line {n} " + "x" * 200 + "\n" for n in range(300)))
    got = block(root)
    assert got.index_cut and got.listed == 0 and got.left_out == 1
    assert len(got.text.encode()) + 1 <= MAX_BYTES and len(got.text.split("\n")) <= MAX_LINES
    assert got.text.split("\n")[-1] == (
        "- … MEMORY.md was cut short and 1 more memory not listed: find them with memory_search, or view /memories."
    )
