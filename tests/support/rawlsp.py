"""A minimal JSON-RPC client over a real server process's stdio, for tests that need the raw wire."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


class RawClient:
    def __init__(self, env: dict[str, str], args: tuple[str, ...] = ()) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kin_memory", "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.messages: list[dict] = []
        self.cond = threading.Condition()
        self.next_id = 0
        self.responders: dict[str, Callable[[dict], object]] = {}  # answers to server → client requests
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                if line.lower().startswith(b"content-length"):
                    length = int(line.split(b":")[1])
            if length is None:
                continue
            msg = json.loads(out.read(length))
            if "id" in msg and "method" in msg:  # server → client request: answer like a plain editor
                responder = self.responders.get(msg["method"])
                result = (
                    responder(msg.get("params") or {})
                    if responder
                    else ([None] if msg["method"] == "workspace/configuration" else None)
                )
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            with self.cond:
                self.messages.append(msg)
                self.cond.notify_all()

    def send(self, msg: dict) -> None:
        data = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def call(self, method: str, params: dict, timeout: float = 30.0) -> dict:
        """Send a request and wait for its response message (with `result` or `error`)."""
        rid = self.request(method, params)
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, pred: Callable[[dict], bool], timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        with self.cond:
            seen = 0
            while True:
                for msg in self.messages[seen:]:
                    if pred(msg):
                        return msg
                seen = len(self.messages)
                if not self.cond.wait(max(deadline - time.monotonic(), 0)):
                    raise AssertionError(f"timed out; last messages: {self.messages[-3:]}")

    def initialize(self, encodings: list[str] | None = None) -> dict:
        caps: dict = {"window": {"workDoneProgress": False}}
        if encodings:
            caps["general"] = {"positionEncodings": encodings}
        rid = self.request(
            "initialize", {"processId": None, "rootUri": None, "capabilities": caps, "workspaceFolders": []}
        )
        reply = self.wait(lambda m: m.get("id") == rid)
        self.notify("initialized", {})
        return reply

    @classmethod
    def started(
        cls, env: dict[str, str], folders: tuple[Path, ...] = (), settings: dict | None = None
    ) -> RawClient:
        """A server initialized with these workspace folders (and `kinMemory` settings, given both as
        initialization options and as the answer to `workspace/configuration`), its first check done."""
        client = cls(env)
        caps: dict = {}
        if settings is not None:
            client.responders["workspace/configuration"] = lambda params: [settings]
            caps = {"workspace": {"configuration": True}}
        rid = client.request("initialize", {
            "processId": None, "rootUri": None, "capabilities": caps,
            "workspaceFolders": [{"uri": f.as_uri(), "name": f.name or "root"} for f in folders],
            **({"initializationOptions": {"kinMemory": settings}} if settings is not None else {}),
        })  # fmt: skip
        client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        client.wait_checked()
        return client

    def wait_checked(self, timeout: float = 60.0) -> dict:
        return self.wait(
            lambda m: m.get("method") == "window/logMessage" and "checked in" in m["params"]["message"],
            timeout,
        )

    def diagnostics(self) -> dict[str, list]:
        """The latest diagnostics per URI, as published so far."""
        with self.cond:
            out: dict[str, list] = {}
            for msg in self.messages:
                if msg.get("method") == "textDocument/publishDiagnostics":
                    out[msg["params"]["uri"]] = msg["params"]["diagnostics"]
            return out

    def close(self) -> str:
        try:
            rid = self.request("shutdown", {})
            self.wait(lambda m: m.get("id") == rid, 10)
            self.notify("exit", {})
            self.proc.wait(10)
        except Exception:  # noqa: BLE001 - a dead server is reported by the caller's assertions
            self.proc.kill()
        stderr = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
        return stderr


@contextmanager
def checked_server(env: dict[str, str]) -> Iterator[RawClient]:
    """A server initialized (no workspace folder), its startup check done; closed afterwards, with no
    traceback in its output."""
    client = RawClient(env)
    try:
        client.initialize()
        client.wait_checked()
        yield client
    finally:
        assert "Traceback" not in client.close()
