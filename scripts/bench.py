"""Benchmark: drive the real server over stdio like an editor and print measures beside the SPEC budgets.

    python scripts/bench.py --files 10000

Generates a seeded synthetic store (Zipf vocabulary, 1–3 folder levels, 200–2,000-byte files, every
category, realistic mtimes, some foreign stamps), then measures cold start to complete store diagnostics
and didChange → publishDiagnostics latency. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CATS = ["project-fact", "preference", "episodic", "session"]


def generate(root: Path, n: int, seed: int = 7) -> None:
    rnd = random.Random(seed)
    vocab = [f"w{i}" for i in range(5000)]
    weights = [1 / (i + 1) for i in range(5000)]
    now = time.time()
    for i in range(n):
        depth = rnd.randint(1, 3)
        folder = root.joinpath(*[f"d{rnd.randint(0, 20)}" for _ in range(depth)])
        folder.mkdir(parents=True, exist_ok=True)
        cat = rnd.choice(CATS)
        stamp = rnd.choice(["global", "/srv/repos/a", "/srv/repos/b", None])
        head = f"---\ncategory: {cat}\n" + (f"workspace: {stamp}\n" if stamp else "") + "---\n"
        size = rnd.randint(200, 2000)
        words = rnd.choices(vocab, weights, k=size // 6)
        body = f"# Memory {i}\n\n" + " ".join(words) + "\n"
        p = folder / f"m{i}.md"
        p.write_text(head + body)
        age = rnd.uniform(0, 400) * 86400
        os.utime(p, (now - age, now - age))


class Client:
    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0
        self.lock = threading.Lock()
        self.events: list[tuple[float, dict]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                ch = out.read(1)
                if not ch:
                    return
                header += ch
            length = int([h for h in header.decode().split("\r\n") if h.lower().startswith("content-length")][0].split(":")[1])
            msg = json.loads(out.read(length))
            if "id" in msg and "method" in msg:  # a server → client request: answer null
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            with self.cond:
                self.events.append((time.perf_counter(), msg))
                self.cond.notify_all()

    def send(self, msg: dict) -> None:
        data = json.dumps(msg).encode()
        with self.lock:
            assert self.proc.stdin
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, pred, start: int = 0, timeout: float = 120) -> tuple[float, dict, int]:
        deadline = time.monotonic() + timeout
        with self.cond:
            i = start
            while True:
                while i < len(self.events):
                    t, msg = self.events[i]
                    i += 1
                    if pred(msg):
                        return t, msg, i
                if not self.cond.wait(max(deadline - time.monotonic(), 0)):
                    raise TimeoutError("no matching message")


def bench(n: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="kin-bench-"))
    root = tmp / "memory"
    generate(root, n)
    env = {**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(tmp)}
    t0 = time.perf_counter()
    c = Client([sys.executable, "-m", "kin_memory", "serve"], env)
    c.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}, "workspaceFolders": []})
    c.notify("initialized", {})
    t_done, _, idx = c.wait(lambda m: m.get("method") == "window/logMessage" and "checked in" in m["params"]["message"])
    cold = t_done - t0
    target = next(root.rglob("*.md"))
    uri = target.as_uri()
    text = target.read_text()
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}})
    lat = []
    for v in range(2, 202):
        edited = text.replace("category:", "category:" if v % 2 else "category: x", 1) if False else text + ("x" * (v % 7))
        t = time.perf_counter()
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                            "contentChanges": [{"text": edited}]})
        tr, _, idx = c.wait(lambda m, v=v: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri and m["params"].get("version") == v, idx)
        lat.append((tr - t) * 1000)
    c.proc.kill()
    lat.sort()
    return {"files": n, "cold_start_s": round(cold, 3), "didchange_p50_ms": round(statistics.median(lat), 2),
            "didchange_p95_ms": round(lat[int(len(lat) * 0.95)], 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, nargs="+", default=[10000])
    args = ap.parse_args()
    budgets = {10000: (1.0, 5.0), 100000: (8.0, 5.0)}
    for n in args.files:
        r = bench(n)
        cold_b, change_b = budgets.get(n, (None, 5.0))
        print(json.dumps(r))
        print(f"{n} files: cold start {r['cold_start_s']} s (budget {cold_b} s: {'PASS' if cold_b and r['cold_start_s'] <= cold_b else 'MISS'}); "
              f"didChange→publish p95 {r['didchange_p95_ms']} ms (budget {change_b} ms: "
              f"{'PASS' if r['didchange_p95_ms'] <= change_b else 'MISS'})")


if __name__ == "__main__":
    main()
