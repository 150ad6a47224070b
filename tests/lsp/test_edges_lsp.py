"""Issue 33, item 7, in the running language server: a version number out of SQLite's range is a bad
argument told in a sentence (never an internal error), and a search over a recall index that cannot be
used (its hidden folder a link) answers `complete: false`, never a sure "no match"."""

from __future__ import annotations

import os
from pathlib import Path

from kin_memory.store.paths import HIDDEN_DIR
from support.memfiles import memory, write
from support.rawlsp import RawClient

FACT = memory("project-fact", "# Crane\n\nThe harbour crane lifts containers.\n", "global")
HUGE = 99999999999999999999999
INVALID_PARAMS = -32602


def start(root: Path, home: Path) -> RawClient:
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(home)})
    client.initialize()
    client.wait_checked()
    return client


def command(client: RawClient, name: str, arg: object) -> dict:
    return client.call("workspace/executeCommand", {"command": name, "arguments": [arg]})


def test_version_and_restore_of_an_impossible_version_are_invalid_params(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "facts/crane.md", FACT)
    client = start(root, tmp_path)
    try:
        kept = command(client, "kin.memory.history", {"path": "/memories/facts/crane.md"})["result"][
            "versions"
        ]
        assert len(kept) == 1
        for name in ("kin.memory.version", "kin.memory.restore"):
            reply = command(client, name, {"path": "/memories/facts/crane.md", "version": HUGE})
            assert reply["error"]["code"] == INVALID_PARAMS, reply
            assert reply["error"]["message"] == (
                f"/memories/facts/crane.md has no version {HUGE}: its only version is {kept[0]['version']}."
            )
        assert (root / "facts" / "crane.md").read_text() == FACT
        # the server goes on: the real version is still served
        reply = command(client, "kin.memory.version", {"path": "/memories/facts/crane.md", "version": kept[0]["version"]})  # fmt: skip
        assert reply["result"]["text"] == FACT
    finally:
        stderr = client.close()
    assert "Traceback" not in stderr


def test_search_over_a_linked_index_folder_is_incomplete(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "facts/crane.md", FACT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / HIDDEN_DIR).symlink_to(elsewhere, target_is_directory=True)
    client = start(root, tmp_path)
    try:
        reply = command(client, "kin.memory.search", {"query": "harbour crane"})
        assert reply["result"]["results"] == []
        assert reply["result"]["complete"] is False, reply
    finally:
        stderr = client.close()
    assert "Traceback" not in stderr
    assert list(elsewhere.iterdir()) == []
