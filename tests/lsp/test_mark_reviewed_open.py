"""Mark reviewed on a stale fact that is open in the editor: the buffer's diagnostics follow the file."""

from __future__ import annotations

import os
import time
from pathlib import Path

from support.memfiles import memory, write
from support.rawlsp import RawClient


def test_mark_reviewed_clears_km400_of_an_open_buffer(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    path = write(
        root, "facts/old.md", memory("project-fact", "# Old\n\nAn old fact.\n", "global"), age_days=400
    )
    uri = path.as_uri()
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(tmp_path)})
    try:
        client.initialize()
        client.wait_checked()
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "kin-memory",
                    "version": 1,
                    "text": path.read_text(),
                }
            },
        )
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and any(d["code"] == "KM400" for d in m["params"]["diagnostics"])
            )
        )
        reply = client.call(
            "workspace/executeCommand", {"command": "kin.memory.markReviewed", "arguments": [{"uri": uri}]}
        )
        assert reply.get("result") == {"ok": True}, reply
        assert time.time() - path.stat().st_mtime < 60
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and not any(d["code"] == "KM400" for d in m["params"]["diagnostics"])
            ),
            10,
        )
        listing = client.call("workspace/executeCommand", {"command": "kin.memory.list", "arguments": [{}]})
        (entry,) = listing["result"]["memories"]
        assert entry["status"] == "ok"
    finally:
        assert "Traceback" not in client.close()
