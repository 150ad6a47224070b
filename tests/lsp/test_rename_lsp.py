"""`workspace/willRenameFiles`: renaming a memory in the editor answers the edits that make MEMORY.md's
link and two other memories' references follow it (an open one at its editor version)."""

from __future__ import annotations

import os
from pathlib import Path

from support.memfiles import write
from support.rawlsp import RawClient

FACT = "---\ncategory: project-fact\n---\n"


def test_will_rename_files_answers_the_link_and_reference_edits(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "MEMORY.md", "# Index\n\n- [Build](facts/build.md)\n")
    write(root, "facts/build.md", FACT + "Build with make.\n")
    write(root, "facts/deploy.md", FACT + "After /memories/facts/build.md passes, deploy.\n")
    write(root, "notes/why.md", FACT + "é See /memories/facts/build.md.\n")
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(tmp_path)})
    try:
        caps = {"window": {"workDoneProgress": False}, "workspace": {"fileOperations": {"willRename": True}}}
        rid = client.request(
            "initialize", {"processId": None, "rootUri": None, "capabilities": caps, "workspaceFolders": []}
        )
        init = client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        filters = init["result"]["capabilities"]["workspace"]["fileOperations"]["willRename"]["filters"]
        assert {f["pattern"]["glob"] for f in filters} == {"**/*.md", "**"}
        client.wait_checked()
        why = (root / "notes" / "why.md").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": why, "languageId": "markdown", "version": 7,
                                                                "text": (root / "notes" / "why.md").read_text()}})  # fmt: skip
        old, new = (root / "facts" / "build.md").as_uri(), (root / "kb" / "build.md").as_uri()
        reply = client.call("workspace/willRenameFiles", {"files": [{"oldUri": old, "newUri": new}]})
        changes = {c["textDocument"]["uri"]: c for c in reply["result"]["documentChanges"]}
        assert set(changes) == {(root / "MEMORY.md").as_uri(), (root / "facts" / "deploy.md").as_uri(), why}
        assert changes[why]["textDocument"]["version"] == 7
        [edit] = changes[why]["edits"]
        assert edit == {"range": {"start": {"line": 3, "character": 6}, "end": {"line": 3, "character": 30}},
                        "newText": "/memories/kb/build.md"}  # fmt: skip  # UTF-16 columns after the é
        [link] = changes[(root / "MEMORY.md").as_uri()]["edits"]
        assert link["newText"] == "kb/build.md"
        unrelated = client.call(
            "workspace/willRenameFiles", {"files": [{"oldUri": why, "newUri": why + ".bak"}]}
        )
        assert unrelated["result"] is None
    finally:
        assert "Traceback" not in client.close()
