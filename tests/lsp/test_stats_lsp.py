"""`kin.memory.stats` in a running server answers exactly what `kin-memory stats --json` prints over the
same store; `kin.memory.setMemoryEnabled` writes the global settings file and the next stats say so;
the CLI's human output shows the same numbers with hostile names escaped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.memfiles import memory, write
from support.rawlsp import RawClient, checked_server

DEPLOY = (
    "# Deploy\n\nWe deploy the billing service with blue-green releases every Friday afternoon, after the "
    "release checklist is signed off by the on-call engineer and the change log is published.\n"
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    root = h / ".kin" / "memory"
    gone = str(tmp_path / "moved-away")
    write(root, "facts/a.md", memory("project-fact", "# A\n\nThe api listens on port 8080.\n", "global"))
    write(root, "facts/b.md", memory("project-fact", "# B\n\nThe api listens on port 9090.\n", "global"), 200)
    write(root, "facts/d1.md", memory("project-fact", DEPLOY, "global"))
    write(root, "facts/d2.md", memory("project-fact", DEPLOY.replace("afternoon", ""), "global"))
    write(root, "facts/quiet.md", memory("project-fact", "# Q\n\nquiet\n", gone))
    write(root, "episodes/soon.md", memory("episodic", "# E\n\nsoon\n", "global"), 38)
    write(root, "episodes/\x1b[31mred.md", memory("episodic", "# R\n\nred\n", gone), 40)
    write(root, "sessions/s.md", memory("session", "# S\n\nscratch\n"), 1 / 24)
    write(root, "prefs/p.md", memory("preference", "# P\n\nterse\n"))
    return h


def env(home: Path) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "KIN_MEMORY_DIR"}, "HOME": str(home)}


@pytest.fixture
def client(home: Path) -> Iterator[RawClient]:
    with checked_server(env(home)) as c:
        yield c


def execute(client: RawClient, command: str, arg: object) -> dict:
    reply = client.call("workspace/executeCommand", {"command": command, "arguments": [arg]})
    assert "result" in reply, reply
    return reply["result"]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", "stats", "--workspace", "none", *args],
        capture_output=True, text=True, timeout=60, env=env(home), cwd=str(home),
    )  # fmt: skip


def ready_stats(client: RawClient, arg: dict) -> dict:
    deadline = time.monotonic() + 90  # a loaded machine: the first index build may take a while
    while True:
        result = execute(client, "kin.memory.stats", arg)
        if result["indexState"]["state"] == "ready" or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def test_the_command_answers_what_the_cli_prints(client: RawClient, home: Path) -> None:
    lsp = ready_stats(client, {})
    out = cli(home, "--json")
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    assert printed == lsp, {k: (printed[k], lsp[k]) for k in lsp if printed.get(k) != lsp[k]}
    assert lsp["byCategory"]["project-fact"] == {
        "total": 5, "ok": 3, "stale": 1, "expiring": 0, "expired": 0, "quiet": 1,
    }  # fmt: skip
    assert [e["path"] for e in lsp["expiringSoon"]] == [
        "/memories/sessions/s.md", "/memories/episodes/\x1b[31mred.md", "/memories/episodes/soon.md",
    ]  # fmt: skip
    assert {g["kind"] for g in lsp["groups"]} == {"duplicate", "contradiction"}
    assert lsp["indexState"] == {"state": "ready", "memories": 8}  # sessions are never indexed
    preview = execute(client, "kin.memory.indexPreview", {})
    assert (lsp["promptBlock"]["lines"], lsp["promptBlock"]["bytes"]) == (preview["lines"], preview["bytes"])
    assert lsp["memoryEnabled"] is True and lsp["workspaces"] == [] and lsp["reviewQueue"] == 0


def test_a_workspace_argument_narrows_the_groups_and_the_block(client: RawClient, home: Path) -> None:
    narrowed = execute(client, "kin.memory.stats", {"workspace": "team-infra"})
    assert narrowed["workspaces"] == ["team-infra"]
    out = cli(home, "--json")
    assert json.loads(out.stdout)["byCategory"] == narrowed["byCategory"]


def test_set_memory_enabled_writes_the_global_file_and_stats_follow(client: RawClient, home: Path) -> None:
    settings = home / ".kin" / "settings.toml"
    settings.write_text("# mine\nmemory_reflect = false\n")
    answer = execute(client, "kin.memory.setMemoryEnabled", {"enabled": False})
    assert answer == {"enabled": False, "settingsFile": str(settings)}
    assert settings.read_text() == "# mine\nmemory_reflect = false\nmemory_enabled = false\n"
    assert execute(client, "kin.memory.stats", {})["memoryEnabled"] is False  # stats still answer
    execute(client, "kin.memory.setMemoryEnabled", {"enabled": True})
    assert execute(client, "kin.memory.stats", {})["memoryEnabled"] is True


def test_set_memory_enabled_refuses_with_a_sentence(client: RawClient, home: Path) -> None:
    settings = home / ".kin" / "settings.toml"
    settings.write_text("[broken\n")
    reply = client.call(
        "workspace/executeCommand",
        {"command": "kin.memory.setMemoryEnabled", "arguments": [{"enabled": False}]},
    )
    assert reply["error"]["message"].startswith("~/.kin/settings.toml is not valid TOML"), reply
    assert settings.read_text() == "[broken\n"
    bad = client.call(
        "workspace/executeCommand",
        {"command": "kin.memory.setMemoryEnabled", "arguments": [{"enabled": "no"}]},
    )
    assert "enabled: expected a boolean" in bad["error"]["message"]


def test_the_human_output_is_readable_and_escaped(home: Path) -> None:
    out = cli(home)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "\x1b" not in text and "\\x1b[31mred.md" in text
    assert "project-fact        5      3      1         0        0      1" in text
    assert "quiet (their repository no longer exists): 2" in text
    assert "memory: enabled" in text and "review queue: 0 changes not yet reviewed" in text
