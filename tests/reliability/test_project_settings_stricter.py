"""A project settings file can only make things stricter: with `memory_enabled = false` in the user's
`~/.kin/settings.toml`, a repository's `.kin/settings.toml` saying `true` does not switch memory back on
for the agent (the command line's tool, the MCP server, `MemoryTool`, the language server's tool); a
project's `false` still turns it off where the user left it on. The same holds for every key the files
know: a project may only move it the stricter way (`PROJECT_MAY`), never loosen the user's value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.agent import MemoryTool
from kin_memory.store.settings import KNOWN_KEYS, PROJECT_MAY, effective_settings, stricter
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
    client = RawClient.started({**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}, (repo,))
    reply = client.call(
        "workspace/executeCommand",
        {"command": "kin.memory.tool", "arguments": [{"command": "view", "path": "/memories"}]},
    )
    assert "Traceback" not in client.close()
    return reply["result"]["content"]


def _door(door: str, home: Path, root: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What the memory tool answers to `view /memories` through one door, run from the repository."""
    if door == "cli":
        return _cli_tool(home, root, repo)
    if door == "mcp":
        with mcp_session(root, home, repo) as s:
            return s.memory(command="view", path="/memories")[0]
    if door == "lsp":
        return _lsp_tool(home, root, repo)
    from anthropic.lib.tools import ToolError

    monkeypatch.setenv("HOME", str(home))
    try:
        return MemoryTool(root, str(repo)).call({"command": "view", "path": "/memories"})
    except ToolError as err:
        return str(err.content)


DOORS = ["cli", "mcp", "sdk", "lsp"]


@pytest.mark.parametrize("door", DOORS)
def test_a_repository_cannot_switch_memory_back_on(world, door, monkeypatch):
    home, repo, root = world
    user_says(home, "false")
    project_says(repo, "memory_enabled = true\n")
    text = _door(door, home, root, repo, monkeypatch)
    assert text.startswith(DISABLED), text
    assert "~/.kin/settings.toml" in text or str(home) in text, text
    assert "facts/a.md" not in text


def test_the_mcp_servers_search_stays_off_too(world):
    home, repo, root = world
    user_says(home, "false")
    project_says(repo, "memory_enabled = true\n")
    with mcp_session(root, home, repo) as s:
        text, is_error = s.call("memory_search", {"query": "alpha"})
    assert is_error and text.startswith(DISABLED) and "facts/a.md" not in text, text


@pytest.mark.parametrize("door", DOORS)
def test_a_repository_may_still_switch_memory_off_for_itself(world, door, monkeypatch):
    home, repo, root = world
    user_says(home, "true")
    project_says(repo, "memory_enabled = false\n")
    text = _door(door, home, root, repo, monkeypatch)
    assert text.startswith(DISABLED) and ".kin/settings.toml" in text, text
    project_says(repo, "memory_enabled = true\n")  # the user's `true` with a project `true`: on
    assert "facts/a.md" in _door(door, home, root, repo, monkeypatch)


def test_every_key_has_a_direction_a_project_may_move_it():
    assert set(PROJECT_MAY) == set(KNOWN_KEYS)
    assert stricter("memory_enabled", True, False) is False
    assert stricter("memory_enabled", False, True) is False
    assert stricter("memory_reflect", False, True) is False
    assert stricter("memory_enabled", True, None) is True
    assert stricter("memory_dir", "/home/me/mem", "/tmp/theirs") == "/home/me/mem"
    assert stricter("some_future_key", 10, 99) == 10  # a key without a direction: the user's value


@pytest.mark.parametrize(
    ("user_file", "env", "project", "expected"),
    [
        ("", {"KIN_MEMORY_REFLECT": "0"}, "memory_reflect = true\n", False),  # loosening the env: ignored
        ("memory_reflect = false\n", {}, "memory_reflect = true\n", False),  # loosening the file: ignored
        ("", {}, "memory_reflect = false\n", False),  # stricter: applied
        ("", {"KIN_MEMORY_REFLECT": "1"}, "memory_reflect = false\n", False),  # stricter than the env too
        ("memory_reflect = true\n", {}, "memory_reflect = true\n", True),
    ],
)
def test_reflection_moves_only_the_stricter_way(world, user_file, env, project, expected):
    home, repo, _root = world
    (home / ".kin" / "settings.toml").write_text(user_file)
    project_says(repo, project)
    assert effective_settings([str(repo)], home=home, env=env).memory_reflect is expected


def test_a_project_cannot_move_the_store_or_turn_memory_on_among_several_workspaces(world, tmp_path):
    home, repo, _root = world
    other = tmp_path / "other"
    (other / ".kin").mkdir(parents=True)
    user_says(home, "false")
    project_says(repo, 'memory_enabled = true\nmemory_dir = "/tmp/theirs"\n')
    (other / ".kin" / "settings.toml").write_text("memory_enabled = true\n")
    s = effective_settings([str(repo), str(other)], home=home, env={})
    assert not s.memory_enabled and s.disabled_by == home / ".kin" / "settings.toml"
    assert [p.code for p in s.problems] == ["KM700"]
