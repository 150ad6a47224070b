"""KM602 over LSP: the secret's diagnostic offers "Remove the line holding the secret" and "Mark as not a
secret", each a workspace edit on the open document's version; applied as an editor applies it, the first
takes exactly that line out, the second adds the comment above it, and the diagnostics that follow drop
the KM602 (and only it). The secret is fabricated (a repeated block)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from support.lspedits import apply_edits
from support.memfiles import write
from support.rawlsp import RawClient

KEY = "sk-ant-api03-" + "Ab1_" * 8
TEXT = (
    "---\ncategory: project-fact\nworkspace: global\n---\n# Access\n\n"
    f"The staging key is {KEY} for now.\nAsk Ana for the rest.\n"
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "facts/access.md", TEXT)
    return root


def wait_codes(client: RawClient, uri: str, pred, timeout: float = 20.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        diags = client.diagnostics().get(uri)
        if diags is not None and pred({d["code"] for d in diags}):
            return diags
        time.sleep(0.05)
    raise AssertionError(f"diagnostics of {uri}: {client.diagnostics().get(uri)}")


def test_the_secret_offers_remove_and_mark_and_each_changes_exactly_what_it_says(client, store):
    uri = (store / "facts" / "access.md").as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 4, "text": TEXT}},
    )
    diags = wait_codes(client, uri, lambda codes: "KM602" in codes)
    [km602] = [d for d in diags if d["code"] == "KM602"]
    assert km602["range"]["start"]["line"] == 6
    reply = client.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": km602["range"],
                                                    "context": {"diagnostics": [km602]}})  # fmt: skip
    actions = {a["title"]: a for a in reply["result"]}
    assert set(actions) == {
        "Remove the line holding the secret",
        "Mark as not a secret (a comment above the line)",
    }
    for action in actions.values():
        assert action["kind"] == "quickfix" and action["diagnostics"][0]["code"] == "KM602"
        [doc] = action["edit"]["documentChanges"]
        assert doc["textDocument"] == {"uri": uri, "version": 4}  # the open document as the editor has it

    [removal] = actions["Remove the line holding the secret"]["edit"]["documentChanges"]
    removed = apply_edits(TEXT, removal["edits"])
    assert removed == TEXT.replace(f"The staging key is {KEY} for now.\n", "")

    [mark] = actions["Mark as not a secret (a comment above the line)"]["edit"]["documentChanges"]
    marked = apply_edits(TEXT, mark["edits"])
    assert marked == TEXT.replace("The staging", "<!-- kin-memory: disable-next-line KM602 -->\nThe staging")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 5},
                                             "contentChanges": [{"text": marked}]})  # fmt: skip
    after = wait_codes(client, uri, lambda codes: "KM602" not in codes)
    assert {d["code"] for d in after} == {d["code"] for d in diags} - {"KM602"}
