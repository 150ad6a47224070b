"""Hover while the editor floods the server: the p95 of hovers during a burst of 5,000 didChange
notifications across 50 open files, against the p95 of the same hovers on the idle server (budget: at
most 10×). A ratio of the same run's two numbers, so it holds on a slow or shared machine where a
millisecond budget would not.
"""

from __future__ import annotations

import json
import shutil
import threading
import time

from .client import LspClient
from .generate import GeneratedStore
from .stats import latency_summary, pct

FILES = 50
CHANGES = 5000
CHUNK = 50  # frames written at once, then a pause: an editor's pace is bursty, not one write of 5,000
PAUSE_S = 0.01
FOLDER = "bench-burst"


def _text(i: int, n: int) -> str:
    # Every few versions a typo in the category, so the diagnostics keep changing through the burst; each
    # file its own words, so no two are near-duplicates.
    category = "prefrence" if (i + n) % 3 == 0 else "preference"
    words = " ".join(f"t{i}w{k}" for k in range(n % 40))
    return f"---\ncategory: {category}\n---\n# File {i}\n\nversion {n} {words}\n"


def _frame(msg: dict) -> bytes:
    data = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def _send_raw(c: LspClient, data: bytes) -> None:
    assert c.proc.stdin is not None
    with c.write_lock:
        c.proc.stdin.write(data)
        c.proc.stdin.flush()


def burst_hover(c: LspClient, store: GeneratedStore, timeout: float = 120.0) -> dict:
    """Idle hovers, then hovers during the burst; the files are real memories, removed afterwards."""
    folder = store.root / FOLDER
    folder.mkdir(exist_ok=True)
    uris = []
    try:
        for i in range(FILES):
            path = folder / f"f{i}.md"
            path.write_text(_text(i, 0))
            uris.append(path.as_uri())
            c.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uris[i],
                        "languageId": "markdown",
                        "version": 1,
                        "text": _text(i, 0),
                    }
                },
            )

        def timed_hover(k: int) -> float:
            secs, msg = c.call(
                "textDocument/hover",
                {"textDocument": {"uri": uris[k % FILES]}, "position": {"line": 1, "character": 3}},
                timeout,
            )
            if not (msg.get("result") or {}).get("contents"):
                raise RuntimeError(f"hover on the category line answered nothing: {msg}")
            return secs * 1000

        for k in range(20):  # warm up
            timed_hover(k)
        idle = [timed_hover(k) for k in range(100)]
        # Framed up front: the client's own Python work would otherwise compete with its hover thread
        # for the GIL and be measured as server latency.
        versions = [1] * FILES
        chunks, chunk = [], []
        for n in range(CHANGES):
            i = (n * 7) % FILES
            versions[i] += 1
            params = {
                "textDocument": {"uri": uris[i], "version": versions[i]},
                "contentChanges": [{"text": _text(i, versions[i])}],
            }
            chunk.append(_frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params}))
            if len(chunk) == CHUNK:
                chunks.append(b"".join(chunk))
                chunk = []
        if chunk:
            chunks.append(b"".join(chunk))
        during: list[float] = []
        done = threading.Event()

        def hovers() -> None:
            k = 0
            while not done.is_set():
                during.append(timed_hover(k))
                k += 1

        mark = c.mark()
        thread = threading.Thread(target=hovers, daemon=True)
        thread.start()
        started = time.perf_counter()
        for data in chunks:
            _send_raw(c, data)
            time.sleep(PAUSE_S)
        # The burst is over once every file's last version is published.
        final = dict(zip(uris, versions, strict=True))
        for uri, version in final.items():
            c.wait(
                lambda m, uri=uri, version=version: (
                    m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri
                    and m["params"].get("version") == version
                ),
                mark,
                timeout,
            )
        took = time.perf_counter() - started
        done.set()
        thread.join(timeout)
        idle_p95, during_p95 = pct(idle, 0.95), pct(during, 0.95)
        return {
            "idle": latency_summary(idle),
            "during": latency_summary(during),
            "ratio_p95": round(during_p95 / idle_p95, 2) if idle_p95 else None,
            "changes": CHANGES,
            "burst_s": round(took, 3),
        }
    finally:
        for uri in uris:
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        shutil.rmtree(folder, ignore_errors=True)
