"""Edits reach the server's view of a buffer exactly: full and incremental didChange (several changes in
one message, positions in UTF-16 past a character outside the BMP), as the transport applies them
without pygls's dispatch, and anything it does not recognise goes through pygls as before."""

from __future__ import annotations

import os
import time
from pathlib import Path

from support.memfiles import write
from support.rawlsp import RawClient


def _change(span: tuple[int, int, int, int] | None, text: str) -> dict:
    if span is None:
        return {"text": text}
    return {"range": {"start": {"line": span[0], "character": span[1]},
                      "end": {"line": span[2], "character": span[3]}}, "text": text}  # fmt: skip


def _diagnostics(client: RawClient, uri: str, version: int) -> list[dict]:
    message = client.wait(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"].get("version") == version
        ),
        30,
    )
    return message["params"]["diagnostics"]


def test_incremental_and_full_changes_give_the_text_the_editor_has(tmp_path: Path) -> None:
    store = tmp_path / "memory"
    text = "---\ncategory: preference\n---\n# 😀 Title\n\nbody\n"
    path = write(store, "prefs/a.md", text)
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)})
    try:
        client.initialize()
        client.wait_checked()
        uri = path.as_uri()
        client.notify("textDocument/didOpen",
                      {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}})  # fmt: skip
        assert _diagnostics(client, uri, 1) == []

        def edit(version: int, *changes: dict) -> list[dict]:
            client.notify("textDocument/didChange",
                          {"textDocument": {"uri": uri, "version": version}, "contentChanges": list(changes)})  # fmt: skip
            return _diagnostics(client, uri, version)

        # A typo put in by a range: the finding sits exactly on the new value.
        found = edit(2, _change((1, 10, 1, 20), "prefrence"))
        assert [d["range"] for d in found if d["code"] == "KM201"] == [
            {"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 19}}
        ], found
        # Two changes in one message, the second after a surrogate pair (two UTF-16 units): the typo
        # fixed and the title renamed, which the server's search then finds in the buffer.
        assert edit(3, _change((1, 10, 1, 19), "preference"), _change((3, 5, 3, 10), "Renamed")) == []
        word = "Renamed"
        for _ in range(100):
            found = client.call(
                "workspace/executeCommand",
                {"command": "kin.memory.search", "arguments": [{"query": word, "workspace": "none"}]},
            )["result"]["results"]
            if found:
                break
            time.sleep(0.1)
        assert [(r["path"], r["title"]) for r in found] == [("/memories/prefs/a.md", "😀 Renamed")], found
        # The whole text at once: back to the start.
        assert edit(4, _change(None, text)) == []
        # A change the transport does not recognise (a negative position) still goes to pygls: the
        # server answers on, and the next edit is applied as usual.
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 5},
                                                 "contentChanges": [_change((-1, 0, 0, 0), "x")]})  # fmt: skip
        assert "KM201" in [d["code"] for d in edit(6, _change((1, 10, 1, 20), "prefrence"))]
    finally:
        stderr = client.close()
    assert "Traceback" not in stderr, stderr
