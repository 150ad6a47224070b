"""A real `kin-memory serve --tcp` process and raw sockets to it, for tests of the TCP door."""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

LISTENING = re.compile(
    r"listening on (\S+):(\d+); a client presents the token in (.+) as initializationOptions"
)


class TcpServer:
    """`kin-memory serve --tcp --port 0 ...`: the port it bound and the token file it named on stderr."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kin_memory", "serve", "--tcp", "--port", "0", *args],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.stderr_lines: list[str] = []
        match = self._wait_for(LISTENING, 30)
        self.port = int(match.group(2))
        self.token_file = Path(match.group(3))
        self.token = self.token_file.read_text().strip()

    def _wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"the server never said it listens: {self.stderr_lines}"
            if not select.select([self.proc.stderr], [], [], left)[0]:
                continue
            line = self.proc.stderr.readline().decode()
            assert line, f"the server ended: {self.stderr_lines}"
            self.stderr_lines.append(line)
            found = pattern.search(line)
            if found:
                return found

    def connect(self) -> Conn:
        return Conn(socket.create_connection(("127.0.0.1", self.port), timeout=10))

    def stop(self) -> str:
        """Kill it; what it wrote on stderr."""
        if self.proc.poll() is None:
            self.proc.kill()
        _, rest = self.proc.communicate(timeout=10)
        return "".join(self.stderr_lines) + rest.decode(errors="replace")


def frame(message: dict | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def initialize(
    token: str | None, rid: int = 1, options: dict | None = None, caps: dict | None = None
) -> dict:
    opts = dict(options or {})
    if token is not None:
        opts["token"] = token
    params = {"processId": None, "rootUri": None, "capabilities": caps or {}, "initializationOptions": opts}
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


class Conn:
    """One connection to the server: whole messages in and out, what was read beyond a message kept."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.rest = b""
        self.configuration: object = None  # the settings this editor answers workspace/configuration with

    def __enter__(self) -> Conn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def send(self, message: dict | bytes) -> None:
        self.sock.sendall(frame(message))

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read(self, timeout: float = 30) -> dict | None:
        """The next message from the server; None once it closed the connection."""
        deadline = time.monotonic() + timeout
        data = self.rest
        while b"\r\n\r\n" not in data:
            chunk = self._recv(deadline)
            if not chunk:
                return None
            data += chunk
        head, rest = data.split(b"\r\n\r\n", 1)
        length = next(
            int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
        )
        while len(rest) < length:
            chunk = self._recv(deadline)
            if not chunk:
                return None
            rest += chunk
        self.rest = rest[length:]
        return json.loads(rest[:length])

    def wait_for(self, pred: Callable[[dict], bool], timeout: float = 60) -> dict:
        """The first message `pred` accepts (requests from the server answered as a plain editor)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.1, deadline - time.monotonic()))
            assert message is not None, "the server closed the connection"
            if pred(message):
                return message
            if "id" in message and "method" in message:
                result = [self.configuration] if message["method"] == "workspace/configuration" else None
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def closed(self, timeout: float = 30) -> list[dict]:
        """Read until the server closes the connection (a timeout fails): the messages it sent first."""
        got = []
        while (message := self.read(timeout)) is not None:
            got.append(message)
        return got

    def _recv(self, deadline: float) -> bytes:
        self.sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            return self.sock.recv(65536)
        except ConnectionResetError:  # closed with our bytes unread: the same as closed
            return b""


def tcp_env(home: Path, root: Path | None = None) -> dict[str, str]:
    """The server's environment: this home (the token file goes under it), the store at `root` (else the
    default one under home), no workers."""
    env = {k: v for k, v in os.environ.items() if k not in ("KIN_MEMORY_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), KIN_MEMORY_WORKERS="0")
    if root is not None:
        env["KIN_MEMORY_DIR"] = str(root)
    return env
