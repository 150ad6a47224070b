"""Every door's writes wait in the review queue before the first review, and the first look at a store
that does not exist yet answers plainly.

- Writes made before anything reviewed the store (the command line's `tool` through a pipe, the official
  MCP client, the SDK's `MemoryTool`, and a memory that arrived by sync) are all listed by `changes`,
  never taken as the person's own; the person's own hand edit is.
- On a fresh HOME the first write prints no false "memory history not kept" warning, and `memory_search`
  before the store exists answers as `view` does (empty), not with an OS error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kin_memory.agent import MemoryTool
from kin_memory.store.write_hook import around_write
from support.mcp_client import mcp_session


def _run(home: Path, cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("KIN_MEMORY_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", *args], input=stdin, capture_output=True, text=True, timeout=60,
        env=env, cwd=str(cwd),
    )  # fmt: skip


def test_every_doors_writes_wait_for_the_first_review(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    root = home / ".kin" / "memory"
    out = _run(
        home,
        proj,
        "tool",
        "-",
        stdin=json.dumps({"command": "create", "path": "/memories/cli.md", "file_text": "c\n"}),
    )
    assert out.returncode == 0, out.stderr
    assert "history not kept" not in out.stderr, out.stderr  # the fresh store's first write is kept
    with mcp_session(root, home, proj) as s:
        assert s.memory(command="create", path="/memories/mcp.md", file_text="m\n")[1] is False
    MemoryTool(root, str(proj)).call({"command": "create", "path": "/memories/sdk.md", "file_text": "s\n"})
    synced = root / "synced.md"
    with around_write(root, ["/memories/synced.md"], "sync:laptop"):  # what the sync's write-back does
        synced.write_text("---\ncategory: preference\n---\nfrom the laptop\n")
    (root / "hand.md").write_text("---\ncategory: preference\n---\nmine\n")  # the person's own, unwatched
    listed = _run(home, proj, "changes")
    assert listed.returncode == 0, listed.stderr
    queued = {line.split()[1] for line in listed.stdout.splitlines() if line.startswith("created ")}
    assert queued == {"/memories/cli.md", "/memories/mcp.md", "/memories/sdk.md", "/memories/synced.md"}, (
        listed.stdout
    )


def test_search_before_the_store_exists_answers_empty(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    root = home / ".kin" / "memory"
    with mcp_session(root, home, proj) as s:
        assert s.call("memory_search", {"query": "deploy"}) == ("No matching memories.", False)
        listing, err = s.memory(command="view", path="/memories")
        assert not err and listing.endswith("0B\t/memories")
    assert not root.exists()
