"""History and the review queue in a running server: writes from outside are captured as the watcher
sees them (each one, so an intermediate version is restorable), show up in `kin.memory.changes` with
their diff, and accept clears them; restore and revert write through the tool's guard."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from support.memfiles import memory, write
from support.rawlsp import RawClient

FACT = memory("project-fact", "# DB\n\nPostgres listens on 5432.\n", "global")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "facts/db.md", FACT)
    write(root, "prefs/tone.md", memory("preference", "# Tone\n\nterse\n"))
    return root


def execute(client: RawClient, command: str, arg: object) -> dict:
    reply = client.call("workspace/executeCommand", {"command": command, "arguments": [arg]})
    assert "result" in reply, reply
    return reply["result"]


def eventually(fn, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def sources(client: RawClient, vpath: str) -> list[str]:
    return [v["source"] for v in execute(client, "kin.memory.history", {"path": vpath})["versions"]]


def test_an_external_write_is_captured_queued_with_its_diff_and_accept_clears_it(client, store):
    assert execute(client, "kin.memory.changes", {}) == {"changes": []}  # first start: all reviewed
    first = FACT.replace("5432", "5433")
    (store / "facts" / "db.md").write_text(first)
    assert eventually(lambda: len(sources(client, "/memories/facts/db.md")) == 2)
    second = FACT.replace("5432", "6543")  # written over the first: the first stays restorable
    (store / "facts" / "db.md").write_text(second)
    assert eventually(lambda: len(sources(client, "/memories/facts/db.md")) == 3)
    [change] = execute(client, "kin.memory.changes", {})["changes"]
    assert (change["path"], change["kind"], change["source"]) == (
        "/memories/facts/db.md",
        "changed",
        "external",
    )
    assert (
        "-Postgres listens on 5432.\n" in change["diff"] and "+Postgres listens on 6543.\n" in change["diff"]
    )
    assert change["uri"].startswith("file://") and change["reviewedVersion"] is not None
    found = execute(client, "kin.memory.history", {"path": "/memories/facts/db.md"})
    versions = found["versions"]
    assert found["current"] == versions[0]["version"]  # the file holds the newest version's bytes
    middle = execute(
        client, "kin.memory.version", {"path": "/memories/facts/db.md", "version": versions[1]["version"]}
    )
    assert middle["text"] == first
    assert execute(client, "kin.memory.acceptChanges", {"paths": ["/memories/facts/db.md"]})["paths"] == [
        "/memories/facts/db.md"
    ]
    assert execute(client, "kin.memory.changes", {}) == {"changes": []}


def test_tool_writes_are_labelled_and_revert_restores_the_reviewed_text(client, store):
    reply = execute(client, "kin.memory.tool", {"command": "str_replace", "path": "/memories/facts/db.md",
                                                "old_str": "5432", "new_str": "9999"})  # fmt: skip
    assert reply["isError"] is False
    execute(client, "kin.memory.tool", {"command": "delete", "path": "/memories/prefs/tone.md"})
    queue = {
        c["path"]: (c["kind"], c["source"]) for c in execute(client, "kin.memory.changes", {})["changes"]
    }
    assert queue == {
        "/memories/facts/db.md": ("changed", "tool"),
        "/memories/prefs/tone.md": ("deleted", "tool"),
    }
    done = execute(client, "kin.memory.revertChanges", {"all": True})
    assert (
        sorted(done["paths"]) == ["/memories/facts/db.md", "/memories/prefs/tone.md"]
        and done["conflicts"] == []
    )
    assert (store / "facts" / "db.md").read_text() == FACT
    assert (store / "prefs" / "tone.md").exists()
    assert execute(client, "kin.memory.changes", {}) == {"changes": []}


def test_restore_over_lsp_and_its_refusals(client, store):
    execute(client, "kin.memory.tool", {"command": "delete", "path": "/memories/facts/db.md"})
    versions = execute(client, "kin.memory.history", {"path": "/memories/facts/db.md"})["versions"]
    assert [(v["source"], v["deleted"]) for v in versions] == [("tool", True), ("external", False)]
    done = execute(
        client, "kin.memory.restore", {"path": "/memories/facts/db.md", "version": versions[1]["version"]}
    )
    assert done == {"path": "/memories/facts/db.md", "bytes": len(FACT.encode())}
    assert (store / "facts" / "db.md").read_text() == FACT
    for arg, words in (({"path": "/memories/facts/db.md", "version": versions[0]["version"]}, "its deletion"),
                       ({"path": "/memories/../x.md", "version": 1}, "memories"),
                       ({"path": "/memories/facts/db.md", "version": 424242}, "has no version")):  # fmt: skip
        reply = client.call("workspace/executeCommand", {"command": "kin.memory.restore", "arguments": [arg]})
        assert "error" in reply and words in reply["error"]["message"], reply
        assert "Error" not in reply["error"]["message"]
    bad = client.call(
        "workspace/executeCommand",
        {"command": "kin.memory.restore", "arguments": [{"path": "/memories/a.md", "version": "1"}]},
    )
    assert bad["error"]["code"] == -32602


def test_an_explicit_request_with_rescan_sees_a_write_the_watcher_has_not_reported_yet(client, store):
    assert execute(client, "kin.memory.changes", {"rescan": True}) == {"changes": []}
    (store / "prefs" / "tone.md").write_text(memory("preference", "# Tone\n\nterse, and no emoji\n"))
    [change] = execute(client, "kin.memory.changes", {"rescan": True})["changes"]  # at once: no waiting
    assert (change["path"], change["kind"]) == ("/memories/prefs/tone.md", "changed")
    bad = client.call(
        "workspace/executeCommand", {"command": "kin.memory.changes", "arguments": [{"rescan": "yes"}]}
    )
    assert bad["error"]["code"] == -32602


def _open(client: RawClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.notify("textDocument/didOpen",
                  {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}})  # fmt: skip
    return uri


def _save(client: RawClient, path: Path, uri: str, text: str, version: int) -> None:
    """What an editor does on a save: the buffer's change, the file written, then didSave."""
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                             "contentChanges": [{"text": text}]})  # fmt: skip
    path.write_text(text)
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})


def test_each_save_from_the_editor_is_a_kept_version_by_the_person_and_not_queued(client, store):
    path = store / "facts" / "db.md"
    uri = _open(client, path, FACT)
    assert sources(client, "/memories/facts/db.md") == ["external"]  # the first start's baseline
    first, second = FACT.replace("5432", "5433"), FACT.replace("5432", "5434")
    _save(client, path, uri, first, 2)
    assert eventually(lambda: len(sources(client, "/memories/facts/db.md")) == 2, timeout=2.0)
    _save(client, path, uri, second, 3)
    assert eventually(lambda: len(sources(client, "/memories/facts/db.md")) == 3, timeout=2.0)
    versions = execute(client, "kin.memory.history", {"path": "/memories/facts/db.md"})["versions"]
    assert [v["source"] for v in versions] == ["edit", "edit", "external"]
    assert [v["by"] for v in versions[:2]] == ["by you in the editor"] * 2
    middle = execute(client, "kin.memory.version", {"path": "/memories/facts/db.md",
                                                    "version": versions[1]["version"]})  # fmt: skip
    assert middle["text"] == first
    # The person has seen their own saves: nothing to review, and a later catch-up relabels nothing.
    assert execute(client, "kin.memory.changes", {"rescan": True}) == {"changes": []}
    assert sources(client, "/memories/facts/db.md") == ["edit", "edit", "external"]


def test_a_save_on_top_of_an_unreviewed_change_stays_queued_with_both(client, store):
    """The person's save does not hide what someone else changed before it and nobody has reviewed."""
    path = store / "facts" / "db.md"
    reply = execute(client, "kin.memory.tool", {"command": "str_replace", "path": "/memories/facts/db.md",
                                                "old_str": "5432", "new_str": "9999"})  # fmt: skip
    assert reply["isError"] is False
    text = path.read_text()
    uri = _open(client, path, text)
    _save(client, path, uri, text + "\nAnd replicas on 9998.\n", 2)
    assert eventually(lambda: sources(client, "/memories/facts/db.md")[0] == "edit", timeout=2.0)
    [change] = execute(client, "kin.memory.changes", {})["changes"]
    assert change["source"] == "edit" and change["by"] == "by you in the editor"
    assert "+Postgres listens on 9999.\n" in change["diff"] and "+And replicas on 9998.\n" in change["diff"]
