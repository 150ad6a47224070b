"""Recall never lies while the index fills: a search sent the moment the server starts either finds a
memory written just before, or says its answer is incomplete — never an empty, complete answer."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from support.memfiles import memory, write
from support.rawlsp import RawClient


@pytest.mark.parametrize("filler", [0, 2000])
def test_a_search_right_after_start_is_never_a_false_no_match(tmp_path: Path, filler: int) -> None:
    store = tmp_path / "memory"
    for i in range(filler):  # a store big enough that indexing takes a while
        write(store, f"bulk/n{i:04}.md", memory("episodic", f"# Note {i}\n\nroutine filler text {i}\n"))
    word = "zq" + uuid.uuid4().hex[:10]
    write(store, "facts/fresh.md", memory("project-fact", f"# Fresh\n\nThe {word} service owns billing.\n"))
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)})
    try:
        client.initialize()  # no settle time: the search goes out at once
        reply = client.call(
            "workspace/executeCommand",
            {"command": "kin.memory.search", "arguments": [{"query": word, "workspace": "none"}]},
            60,
        )
    finally:
        client.close()
    result = reply["result"]
    paths = [r["path"] for r in result["results"]]
    assert "/memories/facts/fresh.md" in paths or result["complete"] is False, result
    if result["complete"]:
        assert paths[0] == "/memories/facts/fresh.md"


def wait_for_snapshots(store: Path, files: int, timeout: float = 20.0) -> None:
    """Until the findings cache holds a snapshot of every segment of the store's `files` bulk notes."""
    import sqlite3

    from kin_memory.caches.segments import segment_of

    wanted = {segment_of(f"/memories/bulk/n{i:04}.md") for i in range(files)}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = sqlite3.connect(f"file:{store / '.kin-index' / 'findings.sqlite3'}?mode=ro", uri=True)
            try:
                have = {seg for (seg,) in conn.execute("SELECT DISTINCT seg FROM segments")}
            finally:
                conn.close()
            if wanted <= have:
                return
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the first session's workers wrote no snapshot of some segments in {timeout}s")


def test_a_memory_written_while_the_editor_was_closed_is_found_at_once(tmp_path: Path) -> None:
    """The warm restart: index and findings cache are there from the last session, one memory is new."""
    store = tmp_path / "memory"
    for i in range(500):
        write(store, f"bulk/n{i:04}.md", memory("episodic", f"# Note {i}\n\nroutine filler text {i}\n"))
    env = {**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)}
    first = RawClient(env)
    try:
        first.initialize()
        first.wait(lambda m: "recall index:" in str(m.get("params", {}).get("message", "")), 60)
    finally:
        first.close()
    wait_for_snapshots(store, 500)  # the first session's workers write them after answering
    word = "zq" + uuid.uuid4().hex[:10]
    write(store, "facts/fresh.md", memory("project-fact", f"# Fresh\n\nThe {word} service owns billing.\n"))
    client = RawClient(env)
    try:
        client.initialize()
        reply = client.call(
            "workspace/executeCommand",
            {"command": "kin.memory.search", "arguments": [{"query": word, "workspace": "none"}]},
            60,
        )
        checked = client.wait_checked()
    finally:
        client.close()
    result = reply["result"]
    paths = [r["path"] for r in result["results"]]
    assert "/memories/facts/fresh.md" in paths or result["complete"] is False, result
    # The new file's segment is checked again whole (the first start kept its segments' snapshots only):
    # every other file comes from the findings cache.
    from kin_memory.caches.segments import segment_of

    beside = sum(
        segment_of(f"/memories/bulk/n{i:04}.md") == segment_of("/memories/facts/fresh.md") for i in range(500)
    )
    assert 0 < beside < 30
    assert f"({500 - beside} unchanged files from the findings cache)" in checked["params"]["message"], (
        checked
    )
