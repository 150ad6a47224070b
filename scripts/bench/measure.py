"""The kin-memory measures of SPEC §10, each driven over stdio like an editor drives the server."""

from __future__ import annotations

import os
import random
import shutil
import statistics
import time
from pathlib import Path

from kin_memory.store.paths import HIDDEN_DIR as INDEX_DIR  # the persistent recall index lives there

from . import REPO
from .client import LspClient, RssSampler
from .generate import GeneratedStore, rank_of


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, int(len(s) * q))], 2) if s else float("nan")


def server_cmd() -> list[str]:
    exe = REPO / ".venv" / "bin" / "kin-memory"
    return (
        [str(exe), "serve"]
        if exe.exists()
        else [str(REPO / ".venv" / "bin" / "python"), "-m", "kin_memory", "serve"]
    )


def _env(store: GeneratedStore) -> dict[str, str]:
    home = store.base / "home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "KIN_MEMORY_DIR": str(store.root), "HOME": str(home)}


def _is_log(m: dict, needle: str) -> bool:
    return m.get("method") == "window/logMessage" and needle in m["params"].get("message", "")


def start(store: GeneratedStore, timeout: float) -> tuple[LspClient, RssSampler, dict]:
    """Spawn, initialize; time to the last publishDiagnostics of the startup check and to the recall sync line."""
    c = LspClient(server_cmd(), _env(store), cwd=store.alpha)
    rss = RssSampler(c.proc.pid)
    alpha = store.alpha.as_uri()
    c.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": alpha,
            "capabilities": {
                "workspace": {"symbol": {}, "configuration": True},
                "textDocument": {"hover": {"contentFormat": ["markdown"]}, "publishDiagnostics": {}},
            },
            "workspaceFolders": [{"uri": alpha, "name": "alpha"}],
        },
    )
    t_init, _, _ = c.wait(lambda m: m.get("id") == 1, 0, timeout)
    c.notify("initialized", {})
    t_log, log_msg, idx = c.wait(lambda m: _is_log(m, "checked in"), 0, timeout)
    last_diag = max(
        (t for t, m in c.messages[:idx] if m.get("method") == "textDocument/publishDiagnostics"),
        default=t_log,
    )
    t_sync, sync_msg, _ = c.wait(lambda m: _is_log(m, "recall index:"), 0, timeout)
    return (
        c,
        rss,
        {
            "initialize_s": round(t_init - c.started, 3),
            "diagnostics_s": round(last_diag - c.started, 3),
            "checked_log": log_msg["params"]["message"],
            "recall_sync_s": round(t_sync - c.started, 3),
            "recall_log": sync_msg["params"]["message"],
            "published": sum(
                1 for _, m in c.messages[:idx] if m.get("method") == "textDocument/publishDiagnostics"
            ),
        },
    )


def open_doc(c: LspClient, path: Path) -> tuple[str, str]:
    uri, text = path.as_uri(), path.read_text()
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
    )
    return uri, text


def did_change(c: LspClient, store: GeneratedStore, rounds: int) -> dict:
    uri, text = open_doc(c, store.root / store.two_kb[0])
    lat = []
    for v in range(2, rounds + 2):
        edited = text + ("x" * (v % 7))  # a typing-like edit to the body of a 2 KB memory
        mark = c.mark()
        t0 = time.perf_counter()
        c.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": edited}]},
        )
        t, _, _ = c.wait(
            lambda m, v=v: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"].get("version") == v
            ),
            mark,
            30,
        )
        lat.append((t - t0) * 1000)
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return {"p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95), "n": len(lat)}


def _body_lines(store: GeneratedStore, ranks: dict[str, int]) -> list[tuple[str, int, float]]:
    """(file, line, median Zipf rank of its words) for the body paragraphs of the 2 KB memories."""
    out = []
    for rel in store.two_kb:
        lines = (store.root / rel).read_text().splitlines()
        fence = 0
        for i, line in enumerate(lines):
            if line.strip() == "---":
                fence += 1
                continue
            if fence < 2 or not line or line.startswith(("#", "-", "See ")):
                continue
            words = [ranks[w] for w in line.lower().replace(".", "").split() if w in ranks]
            if len(words) >= 5:
                out.append((rel, i, statistics.median(words)))
    return out


def hover(c: LspClient, store: GeneratedStore, per_kind: int) -> dict:
    lines = sorted(_body_lines(store, rank_of(store)), key=lambda x: x[2])
    kinds = {"common": lines[:per_kind], "rare": lines[-per_kind:]}
    result: dict = {}
    opened: set[str] = set()
    for kind, picks in kinds.items():
        lat, related = [], 0
        for rel, line, _ in picks:
            uri = (store.root / rel).as_uri()
            if rel not in opened:
                open_doc(c, store.root / rel)
                opened.add(rel)
            secs, msg = c.call(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": line, "character": 3}},
            )
            lat.append(secs * 1000)
            contents = (msg.get("result") or {}).get("contents") or {}
            related += "Related memories" in str(contents)
        result[kind] = {
            "p50_ms": pct(lat, 0.5),
            "p95_ms": pct(lat, 0.95),
            "n": len(lat),
            "with_related": related,
        }
    for rel in opened:
        c.notify("textDocument/didClose", {"textDocument": {"uri": (store.root / rel).as_uri()}})
    return result


def _queries(store: GeneratedStore, rnd: random.Random, n: int) -> list[str]:
    v = store.vocab
    qs = []
    for i in range(n):
        pool = v[:50] if i % 3 == 0 else v[:1500] if i % 3 == 1 else v[1500:]  # common, middling, rare
        qs.append(" ".join(rnd.choice(pool) for _ in range(1 + i % 2)))
    return qs


def workspace_symbol(c: LspClient, store: GeneratedStore, n: int) -> dict:
    lat, empty = [], 0
    for q in _queries(store, random.Random(11), n):
        for k in range(2, len(q) + 1):  # every prefix, as an editor sends them while the user types
            secs, msg = c.call("workspace/symbol", {"query": q[:k]})
            lat.append(secs * 1000)
            empty += not msg.get("result")
    return {"p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95), "n": len(lat), "empty": empty}


def search(c: LspClient, store: GeneratedStore, n: int) -> dict:
    lat, errors = [], 0
    for q in _queries(store, random.Random(13), n):
        secs, msg = c.call(
            "workspace/executeCommand", {"command": "kin.memory.search", "arguments": [{"query": q}]}
        )
        lat.append(secs * 1000)
        errors += "error" in msg
    return {"p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95), "n": len(lat), "errors": errors}


def external_write(c: LspClient, store: GeneratedStore, rounds: int) -> dict:
    lat = []
    folder = store.root / store.folders[0]
    try:
        for i in range(rounds):
            path = folder / f"bench-external-{i}.md"
            uri = path.as_uri()
            mark = c.mark()
            t0 = time.perf_counter()
            path.write_text(
                f"---\ncategory: bench-unknown-{i}\n---\n# External write {i}\n\nWritten by the agent.\n"
            )
            t, _, _ = c.wait(
                lambda m, uri=uri: (
                    m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri
                    and m["params"]["diagnostics"]
                ),
                mark,
                30,
            )
            lat.append((t - t0) * 1000)
            time.sleep(0.2)  # let the watcher's debounce settle between writes
    finally:
        for p in folder.glob("bench-external-*.md"):
            p.unlink()
    return {
        "p50_ms": pct(lat, 0.5),
        "p95_ms": pct(lat, 0.95),
        "max_ms": round(max(lat), 1) if lat else None,
        "n": len(lat),
    }


def run_size(store: GeneratedStore, quick: bool, log=print) -> dict:
    timeout = 60 + store.files / 500
    shutil.rmtree(store.root / INDEX_DIR, ignore_errors=True)  # cold: no persistent index
    rounds = 60 if quick else 200
    c, rss, cold = start(store, timeout)
    out: dict = {"files": store.files, "cold": cold}
    try:
        log(f"  cold start: diagnostics {cold['diagnostics_s']}s, recall synced {cold['recall_sync_s']}s")
        out["did_change"] = did_change(c, store, rounds)
        out["hover"] = hover(c, store, 20 if quick else 50)
        out["workspace_symbol"] = workspace_symbol(c, store, 10 if quick else 30)
        out["search"] = search(c, store, 30 if quick else 100)
        out["external_write"] = external_write(c, store, 5 if quick else 10)
        log("  measured didChange, hover, workspace symbols, search, external writes")
    finally:
        out["rss_cold"] = rss.stop()
        c.close()
    c, rss, warm = start(store, timeout)  # warm: same store, the index left by the first run
    try:
        out["warm"] = warm
        log(f"  warm restart: diagnostics {warm['diagnostics_s']}s, recall synced {warm['recall_sync_s']}s")
    finally:
        out["rss_warm"] = rss.stop()
        c.close()
    return out
