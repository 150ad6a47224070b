"""The memory tool keeps workspaces apart and never breaks a memory, in every door: the core call, the
command line (`kin-memory tool --workspace B`), the MCP server (the official client over stdio), the SDK's
`MemoryTool` and the language server's `kin.memory.tool`.

An agent working in repository B: repository A's memory answers every command as a missing path does,
`view /memories` leaves it out, a folder holding it is neither deleted nor moved, and `create` may not
stamp A's path or a label B does not see (global is fine). The operator's view (`--workspace none`) keeps everything.
Edits of a memory whose frontmatter the store added: `insert` at line 0 or 1 is refused with a sentence
naming the frontmatter's lines, and `str_replace` of the repository path the model wrote matches the body.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kin_memory.agent import MemoryTool
from kin_memory.tool.commands import ToolContext, run_tool
from support.mcp_client import mcp_session
from support.memfiles import memory, write
from support.rawlsp import RawClient

Call = Callable[[dict], tuple[str, bool]]
A_FACT = "# Billing\n\nThe billing service of repository A deploys on Fridays.\n"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """(store, home, A's realpath, B's realpath) with one memory of A, one of B and a global one."""
    home = tmp_path / "home"
    home.mkdir()
    a = tmp_path / "repos" / "a"
    b = tmp_path / "repos" / "b"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    root = tmp_path / "memory"
    a_real, b_real = os.path.realpath(a), os.path.realpath(b)
    write(root, "facts/a-billing.md", memory("project-fact", A_FACT, a_real))
    write(root, "only-a/secret.md", memory("project-fact", "# Only A\n\nA's own folder.\n", a_real))
    write(root, "facts/b-api.md", memory("project-fact", "# API\n\nB's API listens on 8080.\n", b_real))
    write(root, "prefs/tone.md", memory("preference", "# Tone\n\nTerse answers.\n"))
    return root, home, a_real, b_real


@contextmanager
def door(name: str, root: Path, home: Path, workspace: str) -> Iterator[Call]:
    if name == "core":
        yield lambda inp: _core(root, workspace, inp)
    elif name == "cli":
        yield lambda inp: _cli(root, home, workspace, inp)
    elif name == "sdk":
        tool = MemoryTool(root, workspace)
        yield lambda inp: _sdk(tool, inp)
    elif name == "mcp":
        with mcp_session(root, home, home, args=("--workspace", workspace)) as s:
            yield lambda inp: s.call("memory", inp)
    else:
        with _lsp(root, home, workspace) as call:
            yield call


def _core(root: Path, workspace: str, inp: dict) -> tuple[str, bool]:
    result = run_tool(inp, ToolContext(root=root, workspace=None if workspace == "none" else workspace))
    return result.content, result.is_error


def _cli(root: Path, home: Path, workspace: str, inp: dict) -> tuple[str, bool]:
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "tool", json.dumps(inp), "--root", str(root), "--workspace", workspace],
        capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(home)}, cwd=str(home),
    )  # fmt: skip
    assert "Traceback" not in out.stderr, out.stderr
    return out.stdout.removesuffix("\n"), out.returncode == 1


def _sdk(tool: MemoryTool, inp: dict) -> tuple[str, bool]:
    from anthropic.lib.tools import ToolError

    try:
        return tool.call(inp), False
    except ToolError as exc:
        content = exc.content
        return (content if isinstance(content, str) else str(content)), True


@contextmanager
def _lsp(root: Path, home: Path, workspace: str) -> Iterator[Call]:
    env = {**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}
    client = RawClient.started(env, settings={"workspace": workspace})

    def call(inp: dict) -> tuple[str, bool]:
        reply = client.call("workspace/executeCommand", {"command": "kin.memory.tool", "arguments": [inp]})
        return reply["result"]["content"], reply["result"]["isError"]

    try:
        yield call
    finally:
        assert "Traceback" not in client.close()


DOORS = ["core", "cli", "sdk", "mcp", "lsp"]


@pytest.mark.parametrize("name", DOORS)
def test_another_workspaces_memory_answers_as_a_missing_path(world, name: str) -> None:
    root, home, a_real, b_real = world
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    a = "/memories/facts/a-billing.md"
    with door(name, root, home, b_real) as call:
        listing, err = call({"command": "view", "path": "/memories"})
        assert not err and "b-api.md" in listing and "tone.md" in listing
        assert "a-billing" not in listing and "only-a" not in listing
        assert call({"command": "view", "path": a}) == (
            f"The path {a} does not exist. Please provide a valid path.",
            True,
        )
        assert call({"command": "str_replace", "path": a, "old_str": "Fridays", "new_str": "Mondays"}) == (
            f"The path {a} does not exist. Please provide a valid path.",
            True,
        )
        assert call({"command": "insert", "path": a, "insert_line": 5, "insert_text": "x"}) == (
            f"The path {a} does not exist. Please provide a valid path.",
            True,
        )
        assert call({"command": "delete", "path": a}) == (f"The path {a} does not exist", True)
        assert call({"command": "rename", "old_path": a, "new_path": "/memories/mine.md"}) == (
            f"The path {a} does not exist",
            True,
        )
        text, err = call({"command": "delete", "path": "/memories/only-a"})
        assert err and "holds memories of other workspaces" in text and "secret" not in text
        stamped_a = f"---\ncategory: project-fact\nworkspace: {a_real}\n---\n# Planted\n\nInto A's prompt.\n"
        text, err = call({"command": "create", "path": "/memories/facts/planted.md", "file_text": stamped_a})
        assert err and "another repository's workspace" in text, text
        ok = "---\ncategory: project-fact\nworkspace: global\n---\n# Shared\n"
        assert call({"command": "create", "path": "/memories/facts/global.md", "file_text": ok})[1] is False
        # a label this workspace does not see: the memory would vanish from its writer, so it is refused
        label = "---\ncategory: project-fact\nworkspace: team-infra\n---\n# Shared\n"
        text, err = call({"command": "create", "path": "/memories/facts/team-infra.md", "file_text": label})
        assert err and "does not see" in text and "team-infra" in text, text
    after = {p: p.read_bytes() for p in before if p.exists()}
    assert after == before  # nothing of A's changed, nothing was lost
    assert not (root / "facts" / "planted.md").exists() and not (root / "mine.md").exists()


@pytest.mark.parametrize("name", ["core", "cli", "mcp"])
def test_the_operators_view_keeps_everything(world, name: str) -> None:
    root, home, _a, _b = world
    with door(name, root, home, "none") as call:
        listing, _ = call({"command": "view", "path": "/memories"})
        assert "a-billing.md" in listing and "only-a" in listing
        text, err = call({"command": "view", "path": "/memories/facts/a-billing.md"})
        assert not err and "deploys on Fridays" in text


@pytest.mark.parametrize("name", DOORS)
def test_edits_of_a_created_memory_never_break_its_frontmatter(world, name: str) -> None:
    root, home, _a, b_real = world
    path = "/memories/notes/setup.md"
    model_text = f"# Setup\n\nClone into {b_real} and run make.\n"
    with door(name, root, home, b_real) as call:
        assert call({"command": "create", "path": path, "file_text": model_text})[1] is False
        stored = (root / "notes" / "setup.md").read_text()
        assert stored == f"---\ncategory: episodic\nworkspace: {b_real}\n---\n" + model_text
        for line in (0, 1, 2):
            text, err = call({"command": "insert", "path": path, "insert_line": line, "insert_text": "Note."})
            assert err, (line, text)
            assert "lines 1–4 are its frontmatter" in text and "insert at line 4 or later" in text, text
        assert (root / "notes" / "setup.md").read_text() == stored
        # the path the model wrote is matched in the body, not in the stamp the store added
        text, err = call(
            {"command": "str_replace", "path": path, "old_str": b_real, "new_str": b_real + "/api"}
        )
        assert not err, text
        assert call({"command": "insert", "path": path, "insert_line": 4, "insert_text": "Note."})[1] is False
        text, err = call(
            {"command": "str_replace", "path": path, "old_str": f"workspace: {b_real}\n", "new_str": ""}
        )
        assert err and "lose its `workspace:` stamp" in text, text
        text, err = call(
            {"command": "str_replace", "path": path, "old_str": "---\nNote.", "new_str": "Note."}
        )
        assert err and "closing `---` fence" in text, text
    final = (root / "notes" / "setup.md").read_text()
    assert final == (
        f"---\ncategory: episodic\nworkspace: {b_real}\n---\nNote.\n# Setup\n\nClone into {b_real}/api and run make.\n"
    )
