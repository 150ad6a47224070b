"""A hostile repository opened as a workspace folder: its project settings file (a regular file setting
`memory_dir`, a link to /dev/zero, a FIFO) and its memory files carry the attacks of the security issue.
The server opens it and keeps serving; nothing moves, hangs or leaks. Over TCP, one deeply nested frame
gets an error and the server goes on answering."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from reliability_support import memory, write

from support.tcplsp import TcpServer, initialize

HOSTILE_BODY = (
    "# Notes\n\n[run](command:workbench.action.terminal.new) <img src=x onerror=alert(1)>\x1b]52;c;aGk=\x07\n"
    "key: sk-ant-api03-" + "Q" * 40 + "\n"
)


@pytest.mark.parametrize("planted", ["memory-dir", "dev-zero", "fifo"])
def test_the_server_opens_a_hostile_repository_and_keeps_serving(
    planted: str, root: Path, home: Path, tmp_path: Path, server_factory
) -> None:
    repo = tmp_path / "repo"
    (repo / ".kin").mkdir(parents=True)
    settings = repo / ".kin" / "settings.toml"
    elsewhere = tmp_path / "elsewhere"
    if planted == "memory-dir":
        settings.write_text(f'memory_dir = "{elsewhere}"\nmemory_enabled = true\n')
    elif planted == "dev-zero":
        settings.symlink_to("/dev/zero")
    else:
        os.mkfifo(settings)
    target = write(root / "facts" / "notes.md", memory("project-fact", HOSTILE_BODY, str(repo)))
    server = server_factory()
    started = time.monotonic()
    server.initialize(folders=[repo])
    assert time.monotonic() - started < 20
    server.wait_until(lambda: settings.as_uri() in server.diagnostics and server.diagnostics[settings.as_uri()],
                      15, "a diagnostic on the planted settings file")  # fmt: skip
    codes = {d["code"] for d in server.diagnostics[settings.as_uri()]}
    assert codes == ({"KM700"} if planted == "memory-dir" else {"KM701"})
    assert "KM602" in server.codes(target)  # the secret is flagged whatever the repository says
    info = server.command("kin.memory.info", {})["result"]
    assert info["root"] == str(root.resolve()) and not elsewhere.exists()
    assert server.command("kin.memory.search", {"query": "notes", "workspace": "none"})["result"]["results"]
    assert server.shutdown() == 0
    server.assert_clean_stderr()


def test_tcp_survives_a_deeply_nested_frame(root: Path, home: Path) -> None:
    server = TcpServer({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(home)})
    try:
        with server.connect() as conn:
            conn.send(initialize(server.token))
            assert "capabilities" in conn.wait_for(lambda m: m.get("id") == 1)["result"]
            conn.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            deep = b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": ' + b"[" * 1200 + b"]" * 1200 + b"}"
            conn.send(deep)
            error = conn.wait_for(lambda m: m.get("id") is None and "error" in m)
            assert error["error"]["code"] == -32700  # a parse error, and the server is still there
            info = {"command": "kin.memory.info", "arguments": [{}]}
            conn.send({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": info})
            assert conn.wait_for(lambda m: m.get("id") == 2)["result"]["root"] == str(root.resolve())
    finally:
        server.stop()
