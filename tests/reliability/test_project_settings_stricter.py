"""A project settings file can only make things stricter: with `memory_enabled = false` in the user's
`~/.kin/settings.toml`, a repository's `.kin/settings.toml` saying `true` does not switch memory back on
for the agent (the command line's tool, the MCP server, `MemoryTool`, the language server's tool); a
project's `false` still turns it off where the user left it on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.agent import MemoryTool
from kin_memory.store.settings import effective_settings
from support.mcp_client import mcp_session
from support.memfiles import memory, write
from support.rawlsp import RawClient

DISABLED = "Memory is disabled (memory_enabled = false in "


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    (home / ".kin").mkdir(parents=True)
    repo = tmp_path / "repo"
    (repo / ".kin").mkdir(parents=True)
    root = tmp_path / "memory"
    write(root, "facts/a.md", memory("project-fact", "# A\n\nalpha\n"))
    return home, Path(os.path.realpath(repo)), root


def user_says(home: Path, value: str) -> None:
    (home / ".kin" / "settings.toml").write_text(f"memory_enabled = {value}\n")


def project_says(repo: Path, text: str) -> None:
    (repo / ".kin" / "settings.toml").write_text(text)


def test_the_one_rule(world):
    home, repo, _root = world
    user_says(home, "false")
    project_says(repo, "memory_enabled = true\nmemory_reflect = true\n")
    s = effective_settings([str(repo)], home=home, env={})
    assert not s.memory_enabled and s.disabled_by == home / ".kin" / "settings.toml"
    user_says(home, "true")
    project_says(repo, "memory_enabled = false\nmemory_reflect = false\n")
    s = effective_settings([str(repo)], home=home, env={"KIN_MEMORY_REFLECT": "1"})
    assert not s.memory_enabled and not s.memory_reflect and s.disabled_by == repo / ".kin" / "settings.toml"


def _cli_tool(home: Path, root: Path, repo: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "tool", json.dumps({"command": "view", "path": "/memories"}),
         "--root", str(root)],
        capture_output=True, text=True, timeout=60, cwd=str(repo), env={**os.environ, "HOME": str(home)},
    )  # fmt: skip
    return out.stdout


def _lsp_tool(home: Path, root: Path, repo: Path) -> str:
    client = RawClient({**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)})
    rid = client.request("initialize", {
        "processId": None, "rootUri": repo.as_uri(), "workspaceFolders": [{"uri": repo.as_uri(), "name": "repo"}],
        "capabilities": {},
    })  # fmt: skip
    client.wait(lambda m: m.get("id") == rid)
    client.notify("initialized", {})
    client.wait_checked()
    reply = client.call(
        "workspace/executeCommand",
        {"command": "kin.memory.tool", "arguments": [{"command": "view", "path": "/memories"}]},
    )
    assert "Traceback" not in client.close()
    return reply["result"]["content"]


@pytest.mark.parametrize("door", ["cli", "mcp", "sdk", "lsp"])
def test_a_repository_cannot_switch_memory_back_on(world, door):
    home, repo, root = world
    user_says(home, "false")
    project_says(repo, "memory_enabled = true\n")
    if door == "cli":
        text = _cli_tool(home, root, repo)
    elif door == "mcp":
        with mcp_session(root, home, repo) as s:
            text, _ = s.memory(command="view", path="/memories")
    elif door == "sdk":
        from anthropic.lib.tools import ToolError

        old = os.environ.get("HOME")
        os.environ["HOME"] = str(home)
        try:
            with pytest.raises(ToolError) as err:
                MemoryTool(root, str(repo)).call({"command": "view", "path": "/memories"})
            text = str(err.value.content)
        finally:
            os.environ["HOME"] = old or ""
    else:
        text = _lsp_tool(home, root, repo)
    assert text.startswith(DISABLED), text
    assert "settings.toml" in text and "facts/a.md" not in text
