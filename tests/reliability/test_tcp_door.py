"""The TCP door (lsp/door.py) against a real `kin-memory serve --tcp` and real sockets: loopback only
unless --allow-remote, a token the client presents in `initialize`, the protocol's framing only (a browser's
`fetch` is closed before anything runs), nothing served before `initialize`, one client, and no setting
from a TCP client that moves the store or chooses where reflection sends the transcript and the key."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import sys
from pathlib import Path

from support.tcplsp import TcpServer, initialize, tcp_env

CREATE = {
    "command": "create",
    "path": "/memories/pwned.md",
    "file_text": "---\ncategory: preference\n---\nx\n",
}
TOOL_CREATE = {"command": "kin.memory.tool", "arguments": [CREATE]}


def _execute(rid: int, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": "workspace/executeCommand", "params": params}


def _info(conn, rid: int = 90) -> dict:
    conn.send(_execute(rid, {"command": "kin.memory.info", "arguments": [{}]}))
    return conn.wait_for(lambda m: m.get("id") == rid)


def _admitted(server: TcpServer, caps: dict | None = None, options: dict | None = None):
    conn = server.connect()
    conn.send(initialize(server.token, caps=caps, options=options))
    assert "capabilities" in conn.wait_for(lambda m: m.get("id") == 1)["result"]
    return conn


def _http_post(body: bytes, port: int) -> bytes:
    """What a web page's `fetch("http://127.0.0.1:port/", {method: "POST", body})` sends: a text/plain
    body needs no preflight."""
    head = (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: text/plain;charset=UTF-8\r\n"
        f"Origin: https://example.com\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def test_a_fetch_shaped_http_post_runs_nothing(root: Path, home: Path) -> None:
    server = TcpServer(tcp_env(home, root))
    try:
        # The old header reader took the request's own Content-Length line and skipped the rest: the body
        # ran as a message, before any initialize (this created the memory).
        body = json.dumps(_execute(5, TOOL_CREATE)).encode()
        with server.connect() as conn:
            conn.send_raw(_http_post(body, server.port))
            assert conn.closed() == []  # not a byte answered: closed at the request line
        # Even one that knows the token is refused: the framing is the protocol's or nothing.
        with server.connect() as conn:
            conn.send_raw(_http_post(json.dumps(initialize(server.token)).encode(), server.port))
            assert conn.closed() == []
        with _admitted(server) as conn:  # the server goes on, for the client that presents its token
            assert _info(conn)["result"]["root"] == str(root.resolve())
        assert not (root / "pwned.md").exists()
    finally:
        stderr = server.stop()
    assert "closed a TCP connection: a header line that is not Content-Length or Content-Type" in stderr


def test_no_token_or_a_wrong_one_is_refused(root: Path, home: Path) -> None:
    server = TcpServer(tcp_env(home, root))
    try:
        for token in (None, "wrong", server.token + "x", ""):
            with server.connect() as conn:
                conn.send(initialize(token))
                conn.send(_execute(2, TOOL_CREATE))
                replies = conn.closed()
            assert [(r["id"], r["error"]["code"]) for r in replies] == [(1, -32600)], token
            assert "initializationOptions.token" in replies[0]["error"]["message"]
        with _admitted(server) as conn:
            assert "error" not in _info(conn)
        assert not (root / "pwned.md").exists()
    finally:
        server.stop()


def test_a_request_before_initialize_is_answered_not_initialized_and_not_run(root: Path, home: Path) -> None:
    server = TcpServer(tcp_env(home, root))
    try:
        with server.connect() as conn:
            conn.send(_execute(5, TOOL_CREATE))
            conn.send(
                {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {}}}
            )
            refused = conn.wait_for(lambda m: m.get("id") == 5)
            assert refused["error"]["code"] == -32002
            conn.send(initialize(server.token))
            assert "capabilities" in conn.wait_for(lambda m: m.get("id") == 1)["result"]
            conn.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            view = _execute(
                6, {"command": "kin.memory.tool", "arguments": [{"command": "view", "path": "/memories"}]}
            )
            conn.send(view)
            listing = conn.wait_for(lambda m: m.get("id") == 6)["result"]
            assert "pwned" not in json.dumps(listing)
        assert not (root / "pwned.md").exists()
    finally:
        server.stop()


def test_a_tcp_client_cannot_choose_the_store_or_the_reflection_endpoint(home: Path, tmp_path: Path) -> None:
    """A client that reached the port would have the user's key sent with a transcript to its own server:
    the store root, the provider, base URL and key variable from it are all ignored, however it sends
    them (initializationOptions, the configuration answer, didChangeConfiguration)."""
    root = home / ".kin" / "memory"  # the default store: a memoryDir setting would otherwise move it
    root.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    transcript = tmp_path / "t.md"
    transcript.write_text("user: please always write the tests before the fix\n")
    with socket.create_server(("127.0.0.1", 0)) as catcher:  # the client's "model server"
        url = f"http://127.0.0.1:{catcher.getsockname()[1]}/v1"
        hostile = {
            "memoryDir": str(elsewhere),
            "reflection": {"provider": "openai", "model": "m", "baseUrl": url, "apiKeyEnv": "GITHUB_TOKEN",
                           "timeoutSeconds": 3},
        }  # fmt: skip
        env = {**tcp_env(home), "GITHUB_TOKEN": "ghp_" + "s" * 36}
        server = TcpServer(env)
        try:
            caps = {"workspace": {"configuration": True}}
            with _admitted(server, caps=caps, options=hostile) as conn:
                conn.configuration = {"kinMemory": hostile}
                conn.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
                conn.send({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                           "params": {"settings": {"kinMemory": hostile}}})  # fmt: skip
                info = _info(conn)["result"]
                assert info["root"] == str(root.resolve()) and info["rootSource"] == "default"
                args = [{"transcript": transcript.as_uri()}]
                conn.send(_execute(7, {"command": "kin.memory.reflect", "arguments": args}))
                reply = conn.wait_for(lambda m: m.get("id") == 7)
            assert "reflection.provider" in reply["error"]["message"]  # not configured: nothing was sent
            catcher.setblocking(False)
            try:
                catcher.accept()
                contacted = True
            except BlockingIOError:
                contacted = False
            assert not contacted, "the client's endpoint was contacted"
            assert not elsewhere.exists()
        finally:
            stderr = server.stop()
    for name in ("memoryDir", "reflection.provider", "reflection.baseUrl", "reflection.apiKeyEnv"):
        assert f"a TCP client cannot set {name}; ignored" in stderr


def test_a_second_connection_is_refused_while_one_is_served(root: Path, home: Path) -> None:
    server = TcpServer(tcp_env(home, root))
    try:
        with _admitted(server) as conn:
            try:
                socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
                refused = False
            except ConnectionRefusedError:
                refused = True
            assert refused
            assert "error" not in _info(conn)  # the first one is still served
    finally:
        server.stop()


def test_another_header_closes_an_admitted_connection_before_its_message_runs(root: Path, home: Path) -> None:
    server = TcpServer(tcp_env(home, root))
    try:
        with _admitted(server) as conn:
            conn.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            body = json.dumps(_execute(5, TOOL_CREATE)).encode()
            conn.send_raw(b"Content-Length: %d\r\nX-Forwarded-For: 1.2.3.4\r\n\r\n%s" % (len(body), body))
            assert all(m.get("id") != 5 for m in conn.closed())
        assert server.proc.wait(30) == 0
        assert not (root / "pwned.md").exists()
    finally:
        server.stop()


def _serve(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kin_memory", "serve", "--tcp", "--port", "0", *args],
                          env=tcp_env(home), capture_output=True, text=True, timeout=60)  # fmt: skip


def test_a_host_other_than_loopback_needs_allow_remote_and_is_warned(root: Path, home: Path) -> None:
    refused = _serve(home, "--host", "0.0.0.0")
    assert refused.returncode == 2
    assert refused.stderr.startswith("kin-memory: --host: 0.0.0.0 is not a loopback address")
    assert "--allow-remote" in refused.stderr and "Traceback" not in refused.stderr
    assert not (home / ".kin" / "run").exists()  # nothing listened, no token written
    server = TcpServer(tcp_env(home, root), "--host", "0.0.0.0", "--allow-remote")
    try:
        warned = "".join(server.stderr_lines)
        assert "warning: listening on 0.0.0.0, which other machines may reach" in warned
        with _admitted(server) as conn:
            assert "error" not in _info(conn)
    finally:
        server.stop()


def test_the_token_file_is_private_and_never_written_through_a_link(
    root: Path, home: Path, tmp_path: Path
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = home / ".kin" / "run"
    run.mkdir(mode=0o755)
    target = tmp_path / "target"
    target.write_text("theirs\n")
    (run / f"tcp-{port}.token").symlink_to(target)  # planted where the token goes
    server = TcpServer(tcp_env(home, root), "--port", str(port))
    try:
        assert server.port == port and server.token_file == run / f"tcp-{port}.token"
        assert stat.S_ISREG(server.token_file.lstat().st_mode)
        assert stat.S_IMODE(server.token_file.lstat().st_mode) == 0o600 and len(server.token) >= 32
        assert stat.S_IMODE(run.stat().st_mode) == 0o700
        assert target.read_text() == "theirs\n"
        with _admitted(server):
            pass  # the client leaves: the server ends
        assert server.proc.wait(30) == 0
        assert not server.token_file.exists()  # removed at the end
    finally:
        server.stop()


def test_a_token_folder_that_is_a_link_is_refused_with_a_sentence(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / ".kin").mkdir()
    (home / ".kin" / "run").symlink_to(elsewhere)
    refused = _serve(home)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith("kin-memory: cannot write the token file in ")
    assert list(elsewhere.iterdir()) == []


def test_a_tcp_client_cannot_choose_where_the_store_is_pushed(root: Path, home: Path, tmp_path: Path) -> None:
    """`kin.memory.sync` with a `remote` from a TCP client would push every memory to the client's own
    repository: the remote is dropped, so a store without one is not synced at all."""
    catcher = tmp_path / "catcher.git"
    subprocess.run(["git", "init", "-q", "--bare", str(catcher)], check=True)
    server = TcpServer(tcp_env(home, root))
    try:
        with _admitted(server) as conn:
            conn.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            conn.send(_execute(8, {"command": "kin.memory.sync", "arguments": [{"remote": str(catcher)}]}))
            reply = conn.wait_for(lambda m: m.get("id") == 8)
    finally:
        stderr = server.stop()
    assert reply["result"]["needsRemote"] is True
    assert (
        subprocess.run(["git", "--git-dir", str(catcher), "rev-parse", "--verify", "-q", "HEAD"]).returncode
        != 0
    )
    assert "a TCP client cannot set the sync remote; ignored" in stderr
