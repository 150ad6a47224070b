"""Issue 33, item 7, through `kin-memory mcp`: every request gets an answer (raw stdio frames the SDK
cannot read: JSON 50,000 levels deep, a lone surrogate escape, a line that is no JSON), and the server
keeps serving; an agent's write too large for history is refused before it is written (so the review
queue misses nothing); a search over a recall index that cannot be used says so, never "no match"."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kin_memory.history.query import history_of
from kin_memory.store.paths import HIDDEN_DIR
from support.mcp_client import cli, mcp_session, server_env

FACT = "---\ncategory: project-fact\n---\n# Crane\n\nThe harbour crane lifts containers.\n"
PARSE_ERROR = -32700
INVALID_REQUEST = -32600


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "elsewhere"
    d.mkdir()
    return Path(os.path.realpath(d))


class Raw:
    """`kin-memory mcp` spoken to line by line, as a client's stdio transport does."""

    def __init__(self, root: Path, home: Path, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kin_memory", "mcp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=server_env(home, root), cwd=cwd,
        )  # fmt: skip
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 30.0) -> dict:
        return json.loads(self.lines.get(timeout=timeout))

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(30)
        return self.proc.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def raw(tmp_path: Path, home: Path, outside: Path) -> Iterator[Raw]:
    server = Raw(tmp_path / "memory", home, outside)
    server.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}))  # fmt: skip
    assert server.answer()["id"] == 1
    server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    try:
        yield server
    finally:
        assert "Traceback" not in server.close()


def call(request_id: int | str, arguments: str) -> str:
    """A tools/call of the memory tool with `arguments` spliced in as raw JSON text."""
    return (
        f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"tools/call",'
        f'"params":{{"name":"memory","arguments":{arguments}}}}}'
    )


def test_a_request_50000_levels_deep_is_answered_and_the_server_goes_on(raw: Raw) -> None:
    deep = "[" * 50_000 + "]" * 50_000
    raw.send(call(2, '{"command":"view","path":"/memories","x":' + deep + "}"))
    reply = raw.answer()
    assert reply["id"] == 2 and reply["error"]["code"] == PARSE_ERROR
    assert (
        reply["error"]["message"]
        == "The message is nested 50003 levels deep, too deep to be read: nothing was done."
    )
    raw.send(call(3, '{"command":"view","path":"/memories"}'))
    assert raw.answer()["id"] == 3


def test_a_lone_surrogate_escape_is_answered_and_the_server_goes_on(raw: Raw) -> None:
    raw.send(call("7", '{"command":"view","path":"/memories/\\udc80.md"}'))
    reply = raw.answer()
    assert reply["id"] == "7" and reply["error"]["code"] == PARSE_ERROR
    assert "lone surrogate escape" in reply["error"]["message"]
    # a proper pair is text: read as usual
    raw.send(call(8, '{"command":"view","path":"/memories/\\ud83d\\ude00.md"}'))
    reply = raw.answer()
    assert reply["id"] == 8 and reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"].startswith("The path /memories/\U0001f600.md does not exist")


def test_lines_that_are_no_request_are_answered_without_an_id(raw: Raw) -> None:
    raw.send("this is not json")
    assert raw.answer() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": PARSE_ERROR, "message": "The message is not JSON: nothing was done."}}  # fmt: skip
    raw.send('{"jsonrpc":"2.0","id":5,"method":7}')
    reply = raw.answer()
    assert reply["id"] == 5 and reply["error"]["code"] == INVALID_REQUEST
    raw.send(call(6, '{"command":"view","path":"/memories"}'))
    assert raw.answer()["id"] == 6


def test_an_agents_create_too_large_for_history_is_refused_and_nothing_is_missed(
    tmp_path: Path, home: Path, outside: Path
) -> None:
    root = tmp_path / "memory"
    with mcp_session(root, home, outside) as s:
        text, is_error = s.memory(command="create", path="/memories/big.md", file_text="x" * (17 << 20))
        s.memory(command="create", path="/memories/crane.md", file_text=FACT)
    assert is_error
    assert text == (
        "The file /memories/big.md would be 17 MB: too large for the memory tool (the limit is 16 MB). "
        "Nothing was written."
    )
    assert not (root / "big.md").exists()
    assert history_of(root, "/memories/big.md") == []
    queued = json.loads(cli(home, root, outside, "changes", "--json"))["changes"]
    assert [c["path"] for c in queued] == ["/memories/crane.md"]  # every write the agent made is listed


def test_memory_search_over_a_linked_index_folder_says_it_is_incomplete(
    tmp_path: Path, home: Path, outside: Path
) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "crane.md").write_text(FACT)
    elsewhere = tmp_path / "linked"
    elsewhere.mkdir()
    (root / HIDDEN_DIR).symlink_to(elsewhere, target_is_directory=True)
    with mcp_session(root, home, outside) as s:
        text, is_error = s.call("memory_search", {"query": "harbour crane"})
    assert is_error
    assert text == (
        f"memory_search: the recall index cannot be used ({HIDDEN_DIR} is a symbolic link): this search "
        "could not look at every memory."
    )
