"""An agent writing through `kin-memory mcp` while the language server runs: each write is in the review
queue (`kin.memory.changes`) with the source "agent" within a second, and stays attributed to the agent
once the server's watcher has seen the file too."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from support.mcp_client import mcp_session
from support.memfiles import memory, write
from support.rawlsp import RawClient

FACT = memory("project-fact", "# DB\n\nPostgres listens on 5432.\n", "global")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "facts/db.md", FACT)
    return root


def changes(client: RawClient) -> dict[str, tuple[str, str]]:
    reply = client.call("workspace/executeCommand", {"command": "kin.memory.changes", "arguments": [{}]})
    return {c["path"]: (c["kind"], c["source"]) for c in reply["result"]["changes"]}


# Seconds a write may take to reach the queue before the test fails: a hang guard (the queue is fed by the
# write itself, not by a timer), generous for a loaded two-core machine; speed is the bench's to judge.
HANG_GUARD = 10.0


def seen_within(client: RawClient, wanted: dict[str, tuple[str, str]], seconds: float) -> float:
    """Seconds until the queue holds `wanted` (fails past `seconds`)."""
    start = time.monotonic()
    while True:
        got = changes(client)
        elapsed = time.monotonic() - start
        if all(got.get(k) == v for k, v in wanted.items()):
            return elapsed
        assert elapsed < seconds, got
        time.sleep(0.05)


def test_agent_writes_through_mcp_are_queued_for_review_as_agent_within_a_second(client, store, tmp_path):
    assert changes(client) == {}  # the first start marked the store reviewed
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    with mcp_session(store, tmp_path, elsewhere) as s:
        created = s.memory(command="create", path="/memories/facts/api.md", file_text="# API\n\nport 8080\n")
        assert created[1] is False and created[0].startswith(
            "File created successfully at: /memories/facts/api.md. The store added 4 lines of frontmatter"
        )
        assert seen_within(client, {"/memories/facts/api.md": ("created", "agent")}, HANG_GUARD) < HANG_GUARD
        edited = s.memory(command="str_replace", path="/memories/facts/db.md", old_str="5432", new_str="5433")
        assert edited[1] is False
        wanted = {
            "/memories/facts/api.md": ("created", "agent"),
            "/memories/facts/db.md": ("changed", "agent"),
        }
        assert seen_within(client, wanted, HANG_GUARD) < HANG_GUARD
    time.sleep(1.0)  # the server's watcher has seen both files by now: still the agent's
    assert changes(client) == wanted
    history = client.call(
        "workspace/executeCommand",
        {"command": "kin.memory.history", "arguments": [{"path": "/memories/facts/db.md"}]},
    )["result"]["versions"]
    assert [v["source"] for v in history] == ["agent", "external"]
