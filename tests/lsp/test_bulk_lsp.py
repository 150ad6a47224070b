"""Bulk fixes over LSP: `source.fixAll.kinMemory` fixes one file in one edit; `kin.memory.fixAll` and
`kin.memory.restamp` answer one proposal that `kin.memory.applyProposal` writes; KM301 offers the
store-wide re-stamp as an editor command."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.memfiles import write
from support.rawlsp import RawClient

TYPO = "---\ncategory: Project-Fact\nworkspace: /gone/repo\n---\n# A\n\nfact\n"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "facts/a.md", TYPO)
    write(root, "facts/b.md", "---\ncategory: epsiodic\nworkspace: /gone/repo\n---\n# B\n")
    write(root, "facts/ok.md", "---\ncategory: project-fact\nworkspace: global\n---\n# OK\n")
    return root


def execute(client: RawClient, command: str, arg: object) -> dict:
    reply = client.call("workspace/executeCommand", {"command": command, "arguments": [arg]})
    assert "result" in reply, reply
    return reply["result"]


def actions(client: RawClient, uri: str, line: int, only: list[str] | None = None) -> list[dict]:
    context: dict = {"diagnostics": []}
    if only is not None:
        context["only"] = only
    pos = {"line": line, "character": 12}
    return client.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": pos, "end": pos},
                                                   "context": context})["result"]  # fmt: skip


def test_source_fix_all_is_one_edit_of_the_safe_fixes_only(client, store):
    uri = (store / "facts" / "a.md").as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 3, "text": TYPO}},
    )
    [fix] = actions(client, uri, 0, ["source.fixAll"])
    assert fix["kind"] == "source.fixAll.kinMemory"
    [doc] = fix["edit"]["documentChanges"]
    assert doc["textDocument"]["version"] == 3
    assert doc["edits"] == [{"range": {"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 22}},
                             "newText": "project-fact"}]  # fmt: skip  # the moved repository is not "safe"
    assert actions(client, uri, 0, ["source.organizeImports"]) == []
    quick = actions(client, uri, 2)
    assert all(a["kind"] == "quickfix" for a in quick)
    restamps = [a["command"] for a in quick if a.get("command", {}).get("command") == "kinMemory.restamp"]
    assert [c["arguments"] for c in restamps] == [
        [{"stamp": "/gone/repo"}],
        [{"stamp": "/gone/repo", "to": "global"}],
    ]


def test_fix_all_and_restamp_are_proposals_applied_as_shown(client, store, tmp_path):
    proposal = execute(client, "kin.memory.fixAll", {})
    assert proposal["source"] == "fix" and sorted(c["path"] for c in proposal["changes"]) == [
        "/memories/facts/a.md", "/memories/facts/b.md"]  # fmt: skip
    done = execute(client, "kin.memory.applyProposal", {"id": proposal["id"]})
    assert (
        sorted(done["applied"]) == ["/memories/facts/a.md", "/memories/facts/b.md"]
        and done["conflicts"] == []
    )
    assert "category: project-fact\n" in (store / "facts" / "a.md").read_text()
    assert "category: episodic\n" in (store / "facts" / "b.md").read_text()
    moved = tmp_path / "repo-now"
    moved.mkdir()
    proposal = execute(client, "kin.memory.restamp", {"stamp": "/gone/repo", "to": str(moved)})
    assert len(proposal["changes"]) == 2 and proposal["summary"].startswith("Re-stamp 2 memories")
    execute(client, "kin.memory.applyProposal", {"id": proposal["id"]})
    assert f"workspace: {moved}\n" in (store / "facts" / "b.md").read_text()
    reply = client.call("workspace/executeCommand", {"command": "kin.memory.restamp",
                                                     "arguments": [{"stamp": "/x", "to": "relative/path"}]})  # fmt: skip
    assert "is not a folder" in reply["error"]["message"]
