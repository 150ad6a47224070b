"""A minimal LSP client over a real server's stdio, timing every message it receives, and an RSS sampler."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path


def initialize_params(workspace: Path) -> dict:
    """`initialize` as a plain editor sends it, with one workspace folder."""
    uri = workspace.as_uri()
    return {
        "processId": os.getpid(),
        "rootUri": uri,
        "capabilities": {
            "workspace": {"symbol": {}, "configuration": True},
            "textDocument": {"hover": {"contentFormat": ["markdown"]}, "publishDiagnostics": {}},
        },
        "workspaceFolders": [{"uri": uri, "name": workspace.name}],
    }


class LspClient:
    """Spawns a language server and reads its frames in a thread; each message is kept with its arrival time."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
        self.started = time.perf_counter()
        # A new session so the whole server tree (its worker processes too) can be killed as a group.
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        self.messages: list[tuple[float, dict]] = []
        self.cond = threading.Condition()
        self.write_lock = threading.Lock()
        self.next_id = 0
        self.raw: list[tuple[float, bytes]] = []
        self.raw_cond = threading.Condition()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._parse, daemon=True).start()

    def _read(self) -> None:
        """Raw bytes off the pipe as fast as they come, each chunk stamped with its arrival: a reader that
        parsed as it read would let the pipe fill during a burst of thousands of publishes, and the
        server's writes (and so every time measured) would wait on this client's JSON parsing."""
        out = self.proc.stdout
        assert out is not None
        fd = out.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                chunk = b""
            with self.raw_cond:
                self.raw.append((time.perf_counter(), chunk))
                self.raw_cond.notify()
            if not chunk:
                return

    def _parse(self) -> None:
        """Frames and parses what `_read` gathered; a message's time is the arrival of its last byte.
        Waiters are woken once per batch read, not per message: waking the measuring thread for each of
        tens of thousands of diagnostics costs the machine more than the parse, and steals it from the
        server being measured."""
        buf = b""
        while True:
            with self.raw_cond:
                while not self.raw:
                    self.raw_cond.wait()
                chunks, self.raw = self.raw, []
            batch: list[tuple[float, dict]] = []
            ended = False
            # No cyclic collection while a batch is parsed (frozen after it, below): every message made
            # is kept, none is garbage in a cycle, and collections mid-batch walked each one again,
            # doubling the parse's CPU (0.52 → 1.1-1.2 s for a 100k start's 66,000 diagnostics), a core
            # taken from the server being measured that an editor's own parser would not take.
            gc.disable()
            for arrived, chunk in chunks:
                if not chunk:
                    ended = True
                    break
                buf = buf + chunk
                pos = 0
                while True:
                    end = buf.find(b"\r\n\r\n", pos)
                    if end < 0:
                        break
                    length = None
                    for line in buf[pos:end].split(b"\r\n"):
                        if line.lower().startswith(b"content-length"):
                            length = int(line.split(b":")[1])
                    if length is None or len(buf) < end + 4 + length:
                        break
                    msg = json.loads(buf[end + 4 : end + 4 + length])
                    self._answer(msg)
                    batch.append((arrived, msg))
                    pos = end + 4 + length
                buf = buf[pos:]
            with self.cond:
                self.messages += batch
                self.closed = self.closed or ended
                self.cond.notify_all()
            # Kept messages are never garbage: without this the collector walks all of them again and
            # again (0.8 s of CPU over a 100k start's 66,000 diagnostics).
            gc.freeze()
            gc.enable()
            if ended:
                return

    def _answer(self, msg: dict) -> None:
        if "id" in msg and "method" in msg:  # a server → client request: answer like a plain editor
            result: object = None
            if msg["method"] == "workspace/configuration":
                result = [None] * len(msg.get("params", {}).get("items", [None]))
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def send(self, msg: dict) -> None:
        data = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        with self.write_lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def mark(self) -> int:
        with self.cond:
            return len(self.messages)

    def wait(
        self, pred: Callable[[dict], bool], start: int = 0, timeout: float = 120.0
    ) -> tuple[float, dict, int]:
        """The first message from index `start` on matching `pred`: (arrival time, message, next index)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            i = start
            while True:
                while i < len(self.messages):
                    t, msg = self.messages[i]
                    i += 1
                    if pred(msg):
                        return t, msg, i
                if self.proc.poll() is not None:
                    raise RuntimeError(f"server exited with {self.proc.returncode}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no matching message within {timeout:.0f}s")
                self.cond.wait(remaining)

    def call(self, method: str, params: dict, timeout: float = 120.0) -> tuple[float, dict]:
        """Send a request; (round-trip seconds, response)."""
        start = self.mark()
        t0 = time.perf_counter()
        rid = self.request(method, params)
        t, msg, _ = self.wait(lambda m: m.get("id") == rid and "method" not in m, start, timeout)
        return t - t0, msg

    def close(self) -> None:
        """Polite shutdown, then the whole process group: no orphaned workers."""
        try:
            if self.proc.poll() is None:
                self.call("shutdown", {}, timeout=10)
                self.notify("exit", {})
                self.proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - a dead or hung server is killed below
            pass
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def descendants(pid: int) -> list[int]:
    """pid and every process below it (from /proc/<pid>/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return out


def _status_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in kB (0 when it is gone)."""
    found = {"VmRSS": 0, "VmHWM": 0}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key = line.split(":", 1)[0]
            if key in found:
                found[key] = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return found


def _pss_kb(pid: int) -> int:
    """Proportional set size: each shared page (the forked workers share most of the server's) counted
    once across the processes that map it, so a tree's sum is the memory it really takes."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class RssSampler:
    """Samples the process tree every 20 ms: peak of the summed VmRSS, peak of the summed PSS (shared
    pages counted once), and the per-process VmHWM seen."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid = pid
        self.interval = interval
        self.peak_tree_kb = 0
        self.peak_pss_kb = 0
        self.hwm_kb: dict[int, int] = {}
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop_event.is_set():
            self.sample()
            self.stop_event.wait(self.interval)

    def sample(self) -> None:
        pids = descendants(self.pid)
        status = {p: _status_kb(p) for p in pids}
        tree_kb = sum(s["VmRSS"] for s in status.values())
        self.peak_tree_kb = max(self.peak_tree_kb, tree_kb)
        # A process's PSS is never above its RSS: while the tree's RSS is below the PSS peak already seen,
        # its PSS is too, and the costly read (the kernel walks every page) is skipped. At 100k it took a
        # quarter of a core from the server being measured.
        if tree_kb > self.peak_pss_kb:
            self.peak_pss_kb = max(self.peak_pss_kb, sum(_pss_kb(p) for p in pids))
        for p, s in status.items():
            self.hwm_kb[p] = max(self.hwm_kb.get(p, 0), s["VmHWM"])

    def stop(self) -> dict:
        self.sample()
        self.stop_event.set()
        self.thread.join(timeout=1)
        return {
            "peak_tree_rss_mb": round(self.peak_tree_kb / 1024, 1),
            "peak_tree_pss_mb": round(self.peak_pss_kb / 1024, 1),
            "sum_hwm_mb": round(sum(self.hwm_kb.values()) / 1024, 1),
            "processes": len(self.hwm_kb),
        }
