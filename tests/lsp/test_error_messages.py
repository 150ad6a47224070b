"""Every command's error paths answer in sentences: no Python exception class name reaches the user."""

from __future__ import annotations

import os
import re
from pathlib import Path

from kin_memory import protocol
from support.memfiles import memory, write
from support.rawlsp import RawClient

EXCEPTION_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Refused|Failed|Failure)\b|Traceback|\bErrno\b")
BAD_ARGUMENTS: list[object] = [None, [], "text", {"query": 5, "id": 7, "uri": 1, "transcript": 3, "paths": "x"},
                               {"dryRun": "true", "workspace": 9, "limit": "5", "command": "nope"}]  # fmt: skip
FAILING: dict[str, dict] = {
    "kin.memory.reflect": {"transcript": "/nowhere/transcript.md"},
    "kin.memory.applyProposal": {"id": "0123456789abcdef"},
    "kin.memory.discardProposal": {"id": "../../etc"},
    "kin.memory.markReviewed": {"uri": "file:///etc/passwd"},
    "kin.memory.tool": {"command": "view", "path": "/memories/../etc"},
    "kin.memory.search": {"query": "x", "limit": 0},
    "kin.memory.history": {"path": "/memories/../etc"},
    "kin.memory.version": {"path": "/memories/facts/a.md", "version": 424242},
    "kin.memory.restore": {"path": "/memories/facts/a.md", "version": 424242},
    "kin.memory.acceptChanges": {"paths": ["/memories/../etc"]},
}


def test_no_command_answers_with_an_exception_name(tmp_path: Path) -> None:
    store = tmp_path / "memory"
    write(store, "facts/a.md", memory("project-fact", "# A\n\nSome fact.\n"))
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)})
    seen = 0
    try:
        client.initialize()
        client.wait_checked()
        for spec in protocol.COMMANDS:
            calls = [*BAD_ARGUMENTS, FAILING.get(spec.name, {})]
            for argument in calls:
                arguments = [] if argument is None else [argument]
                reply = client.call(
                    "workspace/executeCommand", {"command": spec.name, "arguments": arguments}, 30
                )
                text = reply.get("error", {}).get("message", "") or str(
                    reply.get("result", {}).get("content", "")
                )
                if reply.get("error") or (
                    isinstance(reply.get("result"), dict) and reply["result"].get("isError")
                ):
                    seen += 1
                assert not EXCEPTION_NAME.search(text), (spec.name, argument, text)
    finally:
        stderr = client.close()
    assert seen >= len(protocol.COMMANDS) * 3  # the error paths were really taken
    assert "Traceback" not in stderr
    print(f"{seen} error answers checked")
