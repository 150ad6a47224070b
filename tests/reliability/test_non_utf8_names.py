"""File, folder and repository names that are not valid UTF-8 (`facts/bad\\xff.md`, a folder `dir\\xfe`,
a repository folder `repo\\xfe`): every command, the language server and the MCP server answer without a
traceback and correctly for the other memories. Such a file is reported once (KM900) and left out of the
store everywhere alike (scan, watcher, history, recall, every cache, the tool's listing); a repository so
named is still one workspace, spelt with `\\xNN` escapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.mcp_client import mcp_session
from support.memfiles import memory, write
from support.rawlsp import RawClient

API = memory("project-fact", "# API\n\nThe API listens on port 8080.\n")
BAD = b"---\ncategory: project-fact\n---\n# Bad\n\nThe port is 9090 in a badly named file.\n"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "memory"
    write(root, "facts/api.md", API)
    base = os.fsencode(root)
    with open(base + b"/facts/bad\xff.md", "wb") as f:
        f.write(BAD)
    os.makedirs(base + b"/dir\xfe")
    with open(base + b"/dir\xfe/inner.md", "wb") as f:
        f.write(BAD)
    repo = os.fsdecode(os.fsencode(tmp_path) + b"/repo\xfe")
    os.makedirs(repo)
    return root, home, Path(repo)


def cli(world, *args: str) -> subprocess.CompletedProcess:
    root, home, repo = world
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", *args, "--root", str(root)],
        capture_output=True, timeout=60, cwd=repo, env={**os.environ, "HOME": str(home)},
    )  # fmt: skip
    text = (out.stdout + out.stderr).decode("utf-8", "replace")
    assert "Traceback" not in text and "Error" not in text, (args, text)
    return out


@pytest.mark.parametrize(
    ("args", "code", "expect"),
    [
        (("check",), 0, "KM900 warning: a file or folder name that is not valid UTF-8"),
        (("check", "--format", "json"), 0, "KM900"),
        (("search", "which port does the api listen on"), 0, "/memories/facts/api.md"),
        (("reindex",), 0, "indexed 1 memory"),
        (("stats", "--json"), 0, '"total": 1'),
        (("changes",), 0, "no changes"),
        (("history", "/memories/facts/api.md"), 0, "outside the editor"),
        (("index-preview",), 0, "/memories/facts/api.md"),
    ],
)
def test_every_command_answers_for_the_other_memories(world, args, code, expect):
    out = cli(world, *args)
    text = (out.stdout + out.stderr).decode()
    assert out.returncode in (code, 1 if args[0] == "check" else code), text
    assert expect in text, text
    assert "inner.md" not in text.replace("dir\\xfe", "")  # the badly named folder is not entered
    if args[0] == "check":
        assert text.count("KM900") == 2  # once each: the file and the folder


def test_the_tool_neither_lists_nor_makes_such_a_name(world):
    out = cli(world, "tool", json.dumps({"command": "view", "path": "/memories"}), "--workspace", "none")
    assert b"bad" not in out.stdout and b"/memories/dir" not in out.stdout and b"api.md" in out.stdout
    made = cli(
        world, "tool", json.dumps({"command": "create", "path": "/memories/x\udcff.md", "file_text": "x"})
    )
    assert made.returncode == 1 and b"\\xff" in made.stdout
    assert not any(b"x\xff" in name for name in os.listdir(os.fsencode(world[0])))


def test_a_repository_so_named_is_one_workspace(world):
    root, _home, repo = world
    out = cli(
        world,
        "tool",
        json.dumps({"command": "create", "path": "/memories/facts/here.md", "file_text": "# Here\n\nhere\n"}),
    )
    assert out.returncode == 0, out.stdout
    stamp = json.dumps(os.fsencode(repo).decode("utf-8", "backslashreplace"))
    assert f"workspace: {stamp}\n" in (root / "facts" / "here.md").read_text()
    found = json.loads(cli(world, "search", "here", "--json").stdout)
    assert [r["path"] for r in found["results"]] == ["/memories/facts/here.md"] and found["complete"]


def test_the_language_server_answers_a_complete_search(world):
    root, home, repo = world
    client = RawClient.started({**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}, (Path(repo),))
    reply = client.call(
        "workspace/executeCommand", {"command": "kin.memory.search", "arguments": [{"query": "api port"}]}
    )
    assert "Traceback" not in client.close()
    result = reply["result"]
    assert result["complete"] and [r["path"] for r in result["results"]] == ["/memories/facts/api.md"]


def test_the_mcp_server_answers(world):
    root, home, repo = world
    with mcp_session(root, home, repo) as s:
        found, err = s.call("memory_search", {"query": "which port does the api listen on"})
        listing, _ = s.memory(command="view", path="/memories")
    assert not err and found.startswith("/memories/facts/api.md")
    assert "bad" not in listing and "api.md" in listing
