"""Shared helpers for the reliability suite: a raw stdio JSON-RPC client, the CLI, counters.

The raw client speaks Content-Length framed JSON-RPC to the real `kin-memory serve` process, answers
the few requests the server sends (configuration, progress tokens, registrations) and records every
notification, so a test can send malformed bytes, kill the client side, read the server's stderr and
memory use.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

# Totals for the README's reliability table, printed at the end of the run (see conftest.py).
COUNTS: Counter[str] = Counter()

SERVER_CMD = [sys.executable, "-m", "kin_memory", "serve"]


def env_for(root: Path, home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(home), "PYTHONUNBUFFERED": "1"}
    env.pop("KIN_MEMORY_REFLECT", None)
    env.update(extra)
    return env


def run_check(
    root: Path, home: Path, timeout: float = 60, fmt: str = "json"
) -> subprocess.CompletedProcess[str]:
    """`kin-memory check ROOT --format json` as a subprocess, operator view (no workspace filter)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kin_memory",
            "check",
            str(root),
            "--root",
            str(root),
            "--workspace",
            "none",
            "--format",
            fmt,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env_for(root, home),
        cwd=str(home),
    )


def check_json(root: Path, home: Path, timeout: float = 60) -> list[dict]:
    out = run_check(root, home, timeout)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode in (0, 1), (out.returncode, out.stderr)
    return json.loads(out.stdout)


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def frame(obj: object) -> bytes:
    body = json.dumps(obj).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


DEFAULT_CAPS = {
    "general": {"positionEncodings": ["utf-16"]},
    "workspace": {"configuration": True, "workspaceFolders": True},
    "window": {"workDoneProgress": True},
    "textDocument": {
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "publishDiagnostics": {"relatedInformation": True},
    },
}


class RawServer:
    """The real server process over stdio, driven byte by byte."""

    def __init__(
        self,
        root: Path,
        home: Path,
        *,
        config: dict | None = None,
        config_for: Callable[[dict], object] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.config = config if config is not None else {}
        self.config_for = config_for
        self.proc = subprocess.Popen(
            SERVER_CMD,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env or env_for(root, home),
            cwd=str(home),
        )
        self.pid = self.proc.pid
        self._next_id = 0
        self._cond = threading.Condition()
        self.responses: dict[object, dict] = {}
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self.diagnostics: dict[str, list[dict]] = {}
        self.diag_count = 0
        self.diag_versions: dict[str, int | None] = {}  # uri -> document version of the latest publish
        self._waiters: dict[object, threading.Event] = {}  # request id -> set when its response arrives
        self._stderr = bytearray()
        self._write_lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- plumbing ---------------------------------------------------------------------------------
    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self._stderr += chunk

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                assert length is not None
                body = out.read(length)
                if len(body) < length:
                    return
                self._dispatch(json.loads(body))
        except (OSError, ValueError):  # the test closed our end of the pipe: the client went away
            return
        finally:
            with self._cond:
                self.closed = True
                for waiter in self._waiters.values():
                    waiter.set()
                self._cond.notify_all()

    def _dispatch(self, msg: dict) -> None:
        if "method" in msg and "id" in msg:
            self.server_requests.append(msg)
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": self._answer(msg)})
            return
        with self._cond:
            if "id" in msg or "error" in msg:
                self.responses[msg.get("id")] = msg
                waiter = self._waiters.pop(msg.get("id"), None)
                if waiter is not None:  # the thread waiting for it waits on this, not on the condition
                    waiter.set()
            else:
                self.notifications.append(msg)
                if msg.get("method") == "textDocument/publishDiagnostics":
                    self.diagnostics[msg["params"]["uri"]] = msg["params"]["diagnostics"]
                    self.diag_versions[msg["params"]["uri"]] = msg["params"].get("version")
                    self.diag_count += 1
            self._cond.notify_all()

    def _answer(self, msg: dict) -> object:
        if msg["method"] == "workspace/configuration":
            items = msg["params"]["items"]
            if self.config_for is not None:
                return [self.config_for(item) for item in items]
            return [self.config for _ in items]
        if msg["method"] == "workspace/applyEdit":
            return {"applied": False, "failureReason": "the test client applies no edits"}
        if msg["method"] == "window/showMessageRequest":
            return None
        return None

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, obj: object) -> None:
        self.send_raw(frame(obj))

    def notify(self, method: str, params: object) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_async(self, method: str, params: object) -> int:
        self._next_id += 1
        rid = self._next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def wait_response(self, rid: object, timeout: float = 15) -> dict:
        """Waits on an event of its own: a thread waiting for its answer is not woken by every
        notification (during a burst, hundreds of publishes would each wake it to look)."""
        with self._cond:
            if rid not in self.responses and not self.closed:
                waiter = self._waiters.setdefault(rid, threading.Event())
            else:
                waiter = None
        if waiter is not None:
            waiter.wait(timeout)
        deadline = time.monotonic() + (0 if waiter is not None else timeout)
        with self._cond:
            while rid not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise AssertionError(
                        f"no response to request {rid} (server closed: {self.closed})\n{self.stderr}"
                    )
                self._cond.wait(left)
            return self.responses.pop(rid)

    def request(self, method: str, params: object, timeout: float = 15) -> dict:
        return self.wait_response(self.request_async(method, params), timeout)

    def wait_until(self, pred: Callable[[], bool], timeout: float = 15, what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}\n{self.stderr[-4000:]}")
                self._cond.wait(min(left, 0.05))

    def logs(self) -> list[str]:
        with self._cond:
            return [
                n["params"]["message"] for n in self.notifications if n.get("method") == "window/logMessage"
            ]

    # -- session ----------------------------------------------------------------------------------
    def initialize(
        self, folders: list[Path] | None = None, init_options: dict | None = None, caps: dict | None = None
    ) -> dict:
        params = {
            "processId": os.getpid(),
            "rootUri": None,
            "capabilities": caps or DEFAULT_CAPS,
            "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders or []],
            "initializationOptions": init_options or {},
        }
        result = self.request("initialize", params, timeout=30)
        assert "result" in result, result
        self.notify("initialized", {})
        self.wait_until(lambda: any("checked in" in m for m in self.logs()), 60, "startup")
        return result["result"]

    def open(self, path: Path, text: str | None = None, version: int = 1) -> str:
        uri = path.as_uri()
        if text is None:
            text = path.read_text(encoding="utf-8", errors="replace")
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "markdown", "version": version, "text": text}},
        )
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    def hover(self, uri: str, line: int, character: int, timeout: float = 15) -> dict:
        return self.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
            timeout,
        )

    def command(self, name: str, arg: dict, timeout: float = 30) -> dict:
        return self.request("workspace/executeCommand", {"command": name, "arguments": [arg]}, timeout)

    def tool(self, arg: dict, timeout: float = 30) -> dict:
        response = self.command("kin.memory.tool", arg, timeout)
        assert "result" in response, response
        return response["result"]

    def codes(self, path: Path) -> set[str]:
        with self._cond:
            return {d["code"] for d in self.diagnostics.get(path.as_uri(), [])}

    def shutdown(self, timeout: float = 15) -> int:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout)
                self.notify("exit", None)
            except (AssertionError, BrokenPipeError, OSError):
                pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"server did not exit after shutdown/exit\n{self.stderr}") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
            self.proc.wait(10)

    def assert_clean_stderr(self) -> None:
        text = self.stderr
        assert "Traceback" not in text, text[-6000:]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def memory(category: str = "preference", body: str = "body text\n", workspace: str | None = "global") -> str:
    ws = f"workspace: {workspace}\n" if workspace else ""
    return f"---\ncategory: {category}\n{ws}---\n{body}"


def diag_keys(rows: list[dict]) -> set[tuple]:
    """Comparable (code, range) keys of LSP diagnostics or `check --format json` rows."""
    out = set()
    for d in rows:
        r = d["range"]
        out.add(
            (d["code"], r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])
        )
    return out


def assert_matches_check(server: RawServer, root: Path, home: Path, timeout: float = 20) -> int:
    """The server's latest diagnostics equal a from-scratch `kin-memory check` for every file (waits for
    the server to settle); returns how many files were compared."""
    expected: dict[str, set[tuple]] = {}
    for row in check_json(root, home):
        if row["code"] in ("KM900",) and not Path(row["path"]).is_file():
            continue  # folders and refused links: the server logs these, it has no document to publish on
        expected.setdefault(Path(row["path"]).as_uri(), set()).update(diag_keys([row]))

    def mismatches() -> dict:
        with server._cond:
            got = {uri: diag_keys(d) for uri, d in server.diagnostics.items() if d}
        return {
            u: (got.get(u), expected.get(u))
            for u in set(got) | set(expected)
            if got.get(u) != expected.get(u)
        }

    deadline = time.monotonic() + timeout
    while mismatches() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not mismatches(), mismatches()
    return len(expected)


def tool_cli(
    root: Path, home: Path, call: dict, preexec: Callable[[], None] | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", "tool", "--root", str(root), "--workspace", "none", "-"],
        input=json.dumps(call),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env_for(root, home),
        cwd=str(home),
        preexec_fn=preexec,
    )
