"""Search filters: category, status and age narrow the results; the workspace filter says how many
matches it hid ("n more in other workspaces"), and the operator's view shows them."""

from __future__ import annotations

import os
from pathlib import Path

from support.memfiles import memory, write
from support.rawlsp import RawClient


def test_filters_narrow_and_the_hidden_count_names_other_workspaces(tmp_path: Path) -> None:
    here, there = tmp_path / "repo-here", tmp_path / "repo-there"
    here.mkdir()
    there.mkdir()
    root = tmp_path / "memory"
    write(
        root,
        "facts/here.md",
        memory("project-fact", "# Gateway here\n\nThe gateway retries twice.\n", str(here)),
    )
    write(
        root,
        "facts/there.md",
        memory("project-fact", "# Gateway there\n\nThe gateway retries forever.\n", str(there)),
    )
    write(
        root,
        "episodes/old.md",
        memory("episodic", "# Gateway outage\n\nThe gateway fell over.\n", "global"),
        age_days=60,
    )
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(tmp_path)})

    def search(**arg: object) -> dict:
        reply = client.call(
            "workspace/executeCommand",
            {"command": "kin.memory.search", "arguments": [{"query": "gateway", "limit": 10, **arg}]},
        )
        return reply["result"]

    try:
        client.initialize()
        client.wait_checked()
        mine = search(workspace=str(here))
        assert sorted(r["path"] for r in mine["results"]) == [
            "/memories/episodes/old.md",
            "/memories/facts/here.md",
        ]
        assert mine["hidden"] == 1
        everyone = search(workspace="none")
        assert len(everyone["results"]) == 3 and everyone["hidden"] == 0
        facts = search(workspace=str(here), category="project-fact")
        assert [r["path"] for r in facts["results"]] == ["/memories/facts/here.md"] and facts["hidden"] == 1
        expired = search(workspace="none", status="expired")
        assert [r["path"] for r in expired["results"]] == ["/memories/episodes/old.md"]
        recent = search(workspace="none", maxAgeDays=30)
        assert sorted(r["path"] for r in recent["results"]) == [
            "/memories/facts/here.md",
            "/memories/facts/there.md",
        ]
        typed = search(workspace="none", query="gateway status:expired")  # words typed in the query box
        assert [r["path"] for r in typed["results"]] == ["/memories/episodes/old.md"]
        assert [
            r["path"]
            for r in search(workspace="none", query="gateway age:<30 category:project-fact")["results"]
        ] != []
        bad = client.call(
            "workspace/executeCommand",
            {"command": "kin.memory.search", "arguments": [{"query": "x", "status": "weird"}]},
        )
        assert bad["error"]["code"] == -32602
    finally:
        assert "Traceback" not in client.close()
