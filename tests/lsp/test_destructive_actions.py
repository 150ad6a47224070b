"""Destructive actions over LSP: a sweep deletes exactly the list the user confirmed, the delete quick fix
is an editor command that asks and goes through the memory tool, mark reviewed touches project facts only.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from support.memfiles import memory, write
from support.rawlsp import RawClient

INVALID_PARAMS = -32602


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "episodes/old.md", memory("episodic", "# Old\n\nAn old episode.\n"), age_days=60)
    write(root, "sessions/yesterday.md", memory("session", "# Scratch\n\nyesterday\n"), age_days=2)
    write(root, "episodes/fresh.md", memory("episodic", "# Fresh\n\nrecent\n"), age_days=3)
    write(root, "facts/stale.md", memory("project-fact", "# Stale\n\nold fact\n", "global"), age_days=400)
    write(root, "prefs/tone.md", memory("preference", "# Tone\n\nterse\n"), age_days=400)
    return root


def execute(client: RawClient, command: str, arg: object) -> dict:
    return client.call("workspace/executeCommand", {"command": command, "arguments": [arg]})


def sweep(client: RawClient, arg: object) -> dict:
    reply = execute(client, "kin.memory.sweep", arg)
    assert "result" in reply, reply
    return reply["result"]


def on_disk(store: Path, *rels: str) -> list[str]:
    return [rel for rel in rels if (store / rel).exists()]


EXPIRED = ["/memories/episodes/old.md", "/memories/sessions/yesterday.md"]
ALL = ("episodes/old.md", "sessions/yesterday.md", "episodes/fresh.md", "facts/stale.md", "prefs/tone.md")


# ---------------------------------------------------------------- sweep


@pytest.mark.parametrize("arg", [{}, {"dryRun": False}, None])
def test_sweep_without_a_token_deletes_nothing_and_answers_as_a_dry_run(client, store, arg):
    result = sweep(client, arg)
    assert result["swept"] == EXPIRED and result["kept"] == 3
    assert isinstance(result["token"], str) and result["token"]
    assert on_disk(store, *ALL) == list(ALL)


def test_sweep_with_the_dry_runs_token_deletes_exactly_that_list(client, store):
    dry = sweep(client, {"dryRun": True})
    assert dry["swept"] == EXPIRED and dry["token"]
    assert on_disk(store, *ALL) == list(ALL)
    # Expired after the dry run: not in the list the user confirmed, so not deleted.
    write(store, "episodes/later.md", memory("episodic", "# Later\n\nexpired since\n"), age_days=50)
    done = sweep(client, {"token": dry["token"]})
    assert done == {"swept": EXPIRED, "kept": 3, "token": None, "changed": []}
    assert on_disk(store, *ALL, "episodes/later.md") == [
        "episodes/fresh.md",
        "facts/stale.md",
        "prefs/tone.md",
        "episodes/later.md",
    ]
    audit = [json.loads(line) for line in (store / ".kin-index" / "audit.jsonl").read_text().splitlines()]
    assert [(a["command"], a["paths"], a["outcome"]) for a in audit if a["command"] == "delete"] == [
        ("delete", [p], "ok") for p in EXPIRED
    ]


def test_sweep_keeps_and_reports_a_file_changed_since_the_dry_run(client, store):
    dry = sweep(client, {"dryRun": True})
    path = store / "sessions/yesterday.md"
    mtime = path.stat().st_mtime
    path.write_text(memory("session", "# Scratch\n\nrewritten, still old\n"))
    os.utime(path, (mtime, mtime))  # still expired, but not the file the user was shown
    done = sweep(client, {"dryRun": False, "token": dry["token"]})
    assert done["swept"] == ["/memories/episodes/old.md"]
    assert done["changed"] == ["/memories/sessions/yesterday.md"] and done["token"] is None
    assert path.exists() and not (store / "episodes/old.md").exists()


@pytest.mark.parametrize("token", ["0" * 32, "not a token", ""])
def test_sweep_with_a_foreign_token_deletes_nothing(client, store, token):
    sweep(client, {"dryRun": True})
    result = sweep(client, {"token": token})
    assert result["swept"] == EXPIRED and result["token"] and result["token"] != token
    assert on_disk(store, *ALL) == list(ALL)


def test_sweep_token_is_used_once_and_goes_stale_when_the_list_changes(client, store):
    first = sweep(client, {"dryRun": True})
    # A dry run with the token still only lists.
    assert sweep(client, {"dryRun": True, "token": first["token"]})["token"] == first["token"]
    assert on_disk(store, *ALL) == list(ALL)
    write(store, "episodes/later.md", memory("episodic", "# Later\n\nexpired since\n"), age_days=50)
    second = sweep(client, {"dryRun": True})
    assert second["token"] != first["token"] and "/memories/episodes/later.md" in second["swept"]
    assert sweep(client, {"token": second["token"]})["token"] is None
    assert not (store / "episodes/later.md").exists()
    again = sweep(client, {"token": second["token"]})  # already used: a dry run of what is left
    assert again["swept"] == [] and again["token"]


@pytest.mark.parametrize(
    ("arg", "key"),
    [
        ({"dryRun": "true"}, "dryRun"),
        ({"dryRun": 1}, "dryRun"),
        ({"dryRun": None}, "dryRun"),
        ({"token": 7}, "token"),
    ],
)
def test_sweep_parameters_of_the_wrong_type_are_invalid_params(client, store, arg, key):
    reply = execute(client, "kin.memory.sweep", arg)
    assert reply["error"]["code"] == INVALID_PARAMS, reply
    assert key in reply["error"]["message"]
    assert on_disk(store, *ALL) == list(ALL)


# ---------------------------------------------------------------- the delete quick fix


def actions_for(client: RawClient, uri: str, code: str) -> list[dict]:
    diags = client.wait(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and any(d["code"] == code for d in m["params"]["diagnostics"])
        )
    )["params"]["diagnostics"]
    diag = next(d for d in diags if d["code"] == code)
    reply = client.call(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}},
    )
    return reply["result"]


@pytest.mark.parametrize(("rel", "code"), [("episodes/old.md", "KM402"), ("sessions/yesterday.md", "KM404")])
def test_delete_quick_fix_is_an_editor_command_that_asks_not_a_file_edit(client, store, rel, code):
    path = store / rel
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "kin-memory", "version": 1, "text": path.read_text()}},
    )
    (action,) = [a for a in actions_for(client, uri, code) if a["title"] == "Delete this memory"]
    assert "edit" not in action, action  # a DeleteFile edit would be applied at once, unaudited
    assert action["command"] == {
        "title": "Delete this memory",
        "command": "kinMemory.confirmDelete",
        "arguments": [{"uri": uri, "path": "/memories/" + rel}],
    }
    assert path.exists()
    # What the editor runs once the user confirmed: the tool's delete, with its audit line.
    reply = execute(client, "kin.memory.tool", {"command": "delete", "path": "/memories/" + rel})
    assert reply["result"]["isError"] is False, reply
    assert not path.exists()
    audit = (store / ".kin-index" / "audit.jsonl").read_text()
    assert f'"paths": ["/memories/{rel}"], "outcome": "ok"' in audit


# ---------------------------------------------------------------- mark reviewed


@pytest.mark.parametrize(
    ("rel", "word"),
    [
        ("episodes/old.md", "an episodic memory"),
        ("episodes/fresh.md", "an episodic memory"),
        ("sessions/yesterday.md", "a session memory"),
        ("prefs/tone.md", "a preference"),
    ],
)
def test_mark_reviewed_refuses_anything_but_a_project_fact(client, store, rel, word):
    path = store / rel
    before = (path.stat().st_mtime, path.read_bytes())
    reply = execute(client, "kin.memory.markReviewed", {"uri": path.as_uri()})
    message = reply["error"]["message"]
    assert message.startswith("Only project facts can be marked reviewed: ") and word in message, reply
    assert f"/memories/{rel}" in message and "Error" not in message
    assert (path.stat().st_mtime, path.read_bytes()) == before
    listing = execute(client, "kin.memory.list", {})["result"]["memories"]
    if rel == "episodes/old.md":
        assert next(m for m in listing if m["path"] == "/memories/" + rel)["status"] == "expired"


def test_mark_reviewed_still_touches_a_stale_project_fact(client, store):
    path = store / "facts/stale.md"
    reply = execute(client, "kin.memory.markReviewed", {"uri": path.as_uri()})
    assert reply.get("result") == {"ok": True}, reply
    assert time.time() - path.stat().st_mtime < 60
