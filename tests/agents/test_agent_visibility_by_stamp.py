"""Visibility by stamp, not by parse: a memory of repository A whose frontmatter YAML is broken elsewhere
is still A's (a tolerant line scan reads its stamp), so from B the tool, search and the prompt block
all leave it out, through the official MCP client and the command line; the operator's view still shows
it. A folder holding only A's memories answers from B as a missing path does, not as an empty `0B`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.mcp_client import mcp_session
from support.memfiles import write

BROKEN = "---\ncategory: project-fact\nworkspace: {ws}\ntags: [deploy, unclosed\n---\n# Zebra keys\n\nzebra rotation secret.\n"


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path, str, str]:
    home = tmp_path / "home"
    home.mkdir()
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    a_real, b_real = os.path.realpath(a), os.path.realpath(b)
    root = tmp_path / "memory"
    write(root, "broken/zebra.md", BROKEN.format(ws=a_real))
    write(root, "quoted/zebra.md", BROKEN.format(ws=json.dumps(a_real)).replace("tags", "- oops"))
    write(root, "mine/b.md", f"---\ncategory: project-fact\nworkspace: {b_real}\n---\n# B\n\nb note.\n")
    return root, home, a_real, b_real


def test_a_broken_foreign_memory_stays_foreign_over_mcp(two) -> None:
    root, home, _a, b_real = two
    with mcp_session(root, home, home, args=("--workspace", b_real)) as s:
        listing, err = s.memory(command="view", path="/memories")
        assert not err and "zebra" not in listing and "broken" not in listing and "b.md" in listing
        for vpath in ("/memories/broken/zebra.md", "/memories/quoted/zebra.md"):
            assert s.memory(command="view", path=vpath) == (
                f"The path {vpath} does not exist. Please provide a valid path.", True)  # fmt: skip
            assert s.memory(command="delete", path=vpath) == (f"The path {vpath} does not exist", True)
        assert s.memory(command="view", path="/memories/broken") == (
            "The path /memories/broken does not exist. Please provide a valid path.", True)  # fmt: skip
        found, _ = s.call("memory_search", {"query": "zebra rotation"})
        assert "zebra" not in found.lower(), found
        assert "zebra" not in s.resource("memory://prompt-block").lower()
    assert (root / "broken" / "zebra.md").exists()


def test_the_operators_view_still_shows_it_and_the_cli_agrees(two) -> None:
    root, home, a_real, b_real = two
    env = {**os.environ, "HOME": str(home)}

    def cli(workspace: str, inp: dict) -> tuple[str, int]:
        out = subprocess.run(
            [sys.executable, "-m", "kin_memory", "tool", "-", "--root", str(root), "--workspace", workspace],
            input=json.dumps(inp), capture_output=True, text=True, timeout=60, env=env, cwd=str(home),
        )  # fmt: skip
        return out.stdout, out.returncode

    text, rc = cli(b_real, {"command": "view", "path": "/memories/broken"})
    assert rc == 1 and "does not exist" in text
    text, rc = cli(a_real, {"command": "view", "path": "/memories/broken/zebra.md"})
    assert rc == 0 and "zebra rotation" in text
    text, rc = cli("none", {"command": "view", "path": "/memories"})
    assert rc == 0 and "broken/zebra.md" in text
