"""A hostile repository opened as a workspace folder: its project settings file (a regular file setting
`memory_dir`, a link to /dev/zero, a FIFO) and its memory files carry the attacks of the security issue.
The server opens it and keeps serving; nothing moves, hangs or leaks. Over TCP, one deeply nested frame
gets an error and the server goes on answering."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_support import memory, write

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read_message(sock: socket.socket, deadline: float) -> dict:
    data = b""
    while b"\r\n\r\n" not in data:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        data += sock.recv(65536)
    head, rest = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return json.loads(rest[:length])


def test_tcp_survives_a_deeply_nested_frame(root: Path, home: Path) -> None:
    port = _free_port()
    env = {**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "kin_memory", "serve", "--tcp", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline, "the TCP server never listened"
                time.sleep(0.1)
        with sock:
            deep = b'{"jsonrpc": "2.0", "id": 7, "method": "x", "params": ' + b"[" * 1200 + b"]" * 1200 + b"}"
            sock.sendall(_frame(deep))
            error = _read_message(sock, time.monotonic() + 10)
            assert error["error"]["code"] == -32700  # a parse error, and the server is still there
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
            sock.sendall(_frame(json.dumps(init).encode()))
            reply = _read_message(sock, time.monotonic() + 10)
            while reply.get("id") != 1:
                reply = _read_message(sock, time.monotonic() + 10)
            assert "capabilities" in reply["result"]
    finally:
        proc.kill()
        proc.wait(10)
