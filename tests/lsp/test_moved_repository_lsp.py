"""KM301 over LSP, a moved repository (real git, real server): with webapp open in the editor and a
memory of payments stamped with payments' old path, the first and only preferred action points the
stamp at payments' new path (found by the identity this machine recorded for the old path); applied, it
changes exactly the stamp's value. Without a record of the old path, no action is preferred: re-stamping
to webapp is offered as an explicit choice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kin_memory.store.workspace_aliases import record_workspaces
from support.gitrepos import clone, isolate_git, make_origin
from support.lspedits import apply_edits
from support.memfiles import memory, write
from support.rawlsp import RawClient


def km301_actions(store: Path, webapp: str, tmp_path: Path) -> tuple[str, list[dict]]:
    client = RawClient.started({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path / "home")},
                               folders=(Path(webapp),))  # fmt: skip
    try:
        uri = (store / "facts" / "refunds.md").as_uri()
        text = (store / "facts" / "refunds.md").read_text()
        client.notify("textDocument/didOpen",
                      {"textDocument": {"uri": uri, "languageId": "markdown", "version": 2, "text": text}})  # fmt: skip
        diag = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                           and m["params"]["uri"] == uri and any(d["code"] == "KM301" for d in m["params"]["diagnostics"]))  # fmt: skip
        [km301] = [d for d in diag["params"]["diagnostics"] if d["code"] == "KM301"]
        reply = client.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": km301["range"],
                                                        "context": {"diagnostics": [km301]}})  # fmt: skip
        return text, reply["result"]
    finally:
        assert "Traceback" not in client.close()


@pytest.fixture
def repos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    isolate_git(tmp_path, monkeypatch)
    payments = clone(make_origin(tmp_path, "payments"), tmp_path / "src" / "payments")
    webapp = clone(make_origin(tmp_path, "webapp"), tmp_path / "src" / "webapp")
    return {"payments": payments, "webapp": webapp, "new": os.path.realpath(tmp_path / "code" / "payments")}


def move_payments(repos: dict[str, str]) -> None:
    Path(repos["new"]).parent.mkdir(parents=True)
    os.rename(repos["payments"], repos["new"])


def test_the_moved_repositorys_new_path_is_the_preferred_action(repos, tmp_path: Path) -> None:
    store = tmp_path / "memory"
    write(
        store,
        "facts/refunds.md",
        memory("project-fact", "# Refunds\n\nThrough the ledger.\n", repos["payments"]),
    )
    assert record_workspaces(store, [repos["payments"], repos["webapp"]])  # as a sync records them
    move_payments(repos)
    # the agent, working in the moved repository, stamps what it writes there with the new path
    write(store, "facts/ledger.md", memory("project-fact", "# Ledger\n\nNightly close.\n", repos["new"]))
    text, actions = km301_actions(store, repos["webapp"], tmp_path)
    first = actions[0]
    assert first["title"] == f"Point at the repository's new path {repos['new']}"
    assert first["isPreferred"] is True
    assert [a["title"] for a in actions if a.get("isPreferred")] == [first["title"]]
    [doc] = first["edit"]["documentChanges"]
    assert apply_edits(text, doc["edits"]) == text.replace(
        f"workspace: {repos['payments']}\n", f"workspace: {repos['new']}\n"
    )
    every = [
        a["command"]["arguments"][0]
        for a in actions
        if a.get("command", {}).get("command") == "kinMemory.restamp"
    ]
    assert {"stamp": repos["payments"], "to": repos["new"]} in every
    restamp_here = next(a for a in actions if repos["webapp"] in a["title"])
    assert not restamp_here.get("isPreferred")


def test_without_a_record_of_the_old_path_nothing_is_preferred(repos, tmp_path: Path) -> None:
    store = tmp_path / "memory"
    write(
        store,
        "facts/refunds.md",
        memory("project-fact", "# Refunds\n\nThrough the ledger.\n", repos["payments"]),
    )
    move_payments(repos)
    write(store, "facts/ledger.md", memory("project-fact", "# Ledger\n\nNightly close.\n", repos["new"]))
    _text, actions = km301_actions(store, repos["webapp"], tmp_path)
    assert not any(a.get("isPreferred") for a in actions)
    assert actions[0]["title"] == f"Re-stamp to this workspace {repos['webapp']} (if this memory is about it)"
    assert not any("new path" in a["title"] for a in actions)
