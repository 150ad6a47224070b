"""Recall never lies while the index fills: a search sent the moment the server starts either finds a
memory written just before, or says its answer is incomplete — never an empty, complete answer."""

from __future__ import annotations

import os
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
