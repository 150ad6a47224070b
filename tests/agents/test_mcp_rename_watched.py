"""Over MCP (the official client), a rename reads only what may name the old path (the server watches the
store: mcp/rename_reads.py), and every reference still follows: one another process wrote just before the
call, one in a folder another process moved, one in a session memory."""

from __future__ import annotations

import os
from pathlib import Path

from support.mcp_client import mcp_session

FACT = "---\ncategory: project-fact\n---\n"


def test_references_written_and_moved_by_others_follow_a_rename(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "sessions").mkdir()
    (root / "facts" / "build.md").write_text(FACT + "Build with make.\n")
    (root / "facts" / "test.md").write_text(FACT + "Test with pytest.\n")
    (root / "sessions" / "s1.md").write_text("---\ncategory: session\n---\nSee /memories/facts/build.md.\n")
    (root / "team").mkdir()
    (root / "team" / "onboarding.md").write_text(FACT + "Start with /memories/facts/test.md.\n")
    home = tmp_path / "home"
    home.mkdir()
    cwd = Path(os.path.realpath(tmp_path))
    with mcp_session(root, home, cwd) as s:
        text, failed = s.memory(
            command="rename", old_path="/memories/facts/build.md", new_path="/memories/facts/make.md"
        )
        assert not failed, text
        assert "/memories/facts/make.md" in (root / "sessions" / "s1.md").read_text()
        # Another process writes a reference and moves a folder; the next call comes at once.
        (root / "facts" / "late.md").write_text(FACT + "Run /memories/facts/test.md first.\n")
        os.rename(root / "team", root / "people")
        text, failed = s.memory(
            command="rename", old_path="/memories/facts/test.md", new_path="/memories/facts/check.md"
        )
        assert not failed, text
    assert "/memories/facts/check.md" in (root / "facts" / "late.md").read_text()
    assert "/memories/facts/check.md" in (root / "people" / "onboarding.md").read_text()
    assert not any(p.name.startswith("changes-mark") for p in (root / ".kin-index").iterdir())
