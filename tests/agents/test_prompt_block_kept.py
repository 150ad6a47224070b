"""The MCP prompt block is kept between reads and stays exact: a memory changed, re-stamped, added or
deleted between two reads (by hand, not through the server) shows in the next read as it is on disk,
and the first read of a new server takes what the recall index saw of the unchanged memories."""

from __future__ import annotations

import os
from pathlib import Path

from kin_memory.recall.service import Recall, sync_quietly
from support.mcp_client import mcp_session
from support.memfiles import memory, write


def test_the_prompt_block_follows_the_disk_between_reads(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    a, b = os.path.realpath(tmp_path), "/elsewhere/b"
    root = tmp_path / "memory"
    write(root, "facts/one.md", memory("project-fact", "# One title\n\nx\n", a))
    write(root, "facts/two.md", memory("project-fact", "# Two title\n\nx\n", a))
    write(root, "facts/theirs.md", memory("project-fact", "# Theirs\n\nx\n", b))
    sync_quietly(Recall(root))
    write(root, "facts/two.md", memory("project-fact", "# Two renamed\n\nx\n", a))  # after the index
    with mcp_session(root, home, home, args=("--workspace", a)) as s:
        first = s.resource("memory://prompt-block")
        assert "One title" in first and "Two renamed" in first and "Two title" not in first
        assert "Theirs" not in first
        write(root, "facts/one.md", memory("project-fact", "# One title\n\nx\n", b))  # now B's
        (root / "facts" / "two.md").unlink()
        write(root, "facts/three.md", memory("preference", "# Three new\n\nx\n"))
        write(root, "facts/theirs.md", memory("project-fact", "# Theirs now mine\n\nx\n", a))
        second = s.resource("memory://prompt-block")
    assert "One title" not in second and "Two" not in second
    assert "Three new" in second and "Theirs now mine" in second
