"""MEMORY.md's diagnostics follow the listing: updated when a memory appears, untouched by body edits."""

from __future__ import annotations

import os
import time
from pathlib import Path

from support.rawlsp import RawClient


def publishes(client: RawClient, uri: str) -> list[list]:
    with client.cond:
        return [
            m["params"]["diagnostics"]
            for m in client.messages
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        ]


def codes(diags: list) -> set[str]:
    return {d["code"] for d in diags}


def test_index_follows_listing_not_keystrokes(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "a.md").write_text("---\ncategory: preference\n---\n# A\n\nalpha\n")
    index = root / "MEMORY.md"
    index.write_text("# Index\n\n- [b](/memories/facts/b.md)\n")
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(tmp_path)})
    try:
        client.initialize()
        client.wait_checked()
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == index.as_uri()
                and "KM502" in codes(m["params"]["diagnostics"])
            )
        )

        # Opening a memory as it is on disk, then body keystrokes in it, leave its listing entry alone:
        # MEMORY.md is not checked again (at 100k memories each check is a pass over all of them).
        time.sleep(0.5)
        before = len(publishes(client, index.as_uri()))
        a = root / "facts" / "a.md"
        text = a.read_text()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": a.as_uri(), "languageId": "kin-memory", "version": 1, "text": text}},
        )
        time.sleep(0.5)
        assert len(publishes(client, index.as_uri())) == before
        for v in range(2, 30):
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": a.as_uri(), "version": v},
                    "contentChanges": [{"text": text + "x" * v}],
                },
            )
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == 29
            )
        )
        time.sleep(0.5)
        assert len(publishes(client, index.as_uri())) == before

        # A new title in the buffer is a new listing entry: MEMORY.md is checked again.
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": a.as_uri(), "version": 30},
             "contentChanges": [{"text": text.replace("# A", "# A renamed")}]},
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while len(publishes(client, index.as_uri())) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(publishes(client, index.as_uri())) == before + 1

        # The linked memory appears on disk: the broken-link finding goes away.
        (root / "facts" / "b.md").write_text("---\ncategory: preference\n---\n# B\n")
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == index.as_uri()
                and "KM502" not in codes(m["params"]["diagnostics"])
            ),
            timeout=10,
        )
    finally:
        assert "Traceback" not in client.close()
