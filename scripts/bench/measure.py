"""The kin-memory measures of SPEC §10, each driven over stdio like an editor drives the server."""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

from kin_memory.caches.findings import DB_NAME as FINDINGS_DB
from kin_memory.caches.summaries import PREFIX as SUMMARY_PREFIX
from kin_memory.store.paths import HIDDEN_DIR

from . import REPO
from .client import LspClient, RssSampler, initialize_params
from .generate import GeneratedStore, rank_of
from .stats import latency_summary


def kin_memory_cmd() -> list[str]:
    exe = REPO / ".venv" / "bin" / "kin-memory"
    return [str(exe)] if exe.exists() else [str(REPO / ".venv" / "bin" / "python"), "-m", "kin_memory"]


def server_cmd() -> list[str]:
    return [*kin_memory_cmd(), "serve"]


def server_env(store: GeneratedStore, semantic: str = "on") -> dict[str, str]:
    home = store.base / "home"
    home.mkdir(exist_ok=True)
    return {
        **os.environ,
        "KIN_MEMORY_DIR": str(store.root),
        "HOME": str(home),
        "KIN_RECALL_SEMANTIC": semantic,
    }


def _is_log(m: dict, needle: str) -> bool:
    return m.get("method") == "window/logMessage" and needle in m["params"].get("message", "")


def start(store: GeneratedStore, timeout: float, semantic: str = "on") -> tuple[LspClient, RssSampler, dict]:
    """Spawn, initialize; time to the last publishDiagnostics of the startup check and to the recall sync
    line, with the server tree's memory sampled all along (see timed_start for the times the report takes)."""
    c = LspClient(server_cmd(), server_env(store, semantic), cwd=store.alpha)
    rss = RssSampler(c.proc.pid)
    return c, rss, _started(c, store.alpha, timeout)


def timed_start(store: GeneratedStore, timeout: float, semantic: str = "on") -> dict:
    """`start`'s times, from a start with no memory sampler beside it, the server closed after: the
    sampler's PSS reads make the kernel walk every page of every process of the tree, up to every 20 ms
    while it grows, and took some 0.35 s from a 100k cold start (4.36 s unsampled against 4.73 s
    sampled, medians of three interleaved pairs). Memory and time are measured in separate starts."""
    c = LspClient(server_cmd(), server_env(store, semantic), cwd=store.alpha)
    try:
        return _started(c, store.alpha, timeout)
    finally:
        c.close()


def _started(c: LspClient, workspace: Path, timeout: float) -> dict:
    c.request("initialize", initialize_params(workspace))
    t_init, _, _ = c.wait(lambda m: m.get("id") == 1, 0, timeout)
    c.notify("initialized", {})
    t_log, log_msg, idx = c.wait(lambda m: _is_log(m, "checked in"), 0, timeout)
    last_diag = max(
        (t for t, m in c.messages[:idx] if m.get("method") == "textDocument/publishDiagnostics"),
        default=t_log,
    )
    t_sync, sync_msg, _ = c.wait(lambda m: _is_log(m, "recall index:"), 0, timeout)
    return {
        "initialize_s": round(t_init - c.started, 3),
        "diagnostics_s": round(last_diag - c.started, 3),
        "checked_log": log_msg["params"]["message"],
        "recall_sync_s": round(t_sync - c.started, 3),
        "recall_log": sync_msg["params"]["message"],
        "published": sum(
            1 for _, m in c.messages[:idx] if m.get("method") == "textDocument/publishDiagnostics"
        ),
    }


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
    return latency_summary(lat)


class Paragraph(NamedTuple):
    rel: str  # the memory, relative to the store root
    line: int
    median_rank: float  # median Zipf rank of its vocabulary words: low is common
    words: list[str]  # its vocabulary words, in order


def _body_lines(store: GeneratedStore, ranks: dict[str, int]) -> list[Paragraph]:
    """The body paragraphs of the 2 KB memories with at least 5 vocabulary words."""
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
            words = [w for w in line.lower().replace(".", "").split() if w in ranks]
            if len(words) >= 5:
                out.append(Paragraph(rel, i, statistics.median(ranks[w] for w in words), words))
    return out


def hover_paragraphs(store: GeneratedStore, per_kind: int) -> dict[str, list[Paragraph]]:
    """The paragraphs hovered: the `per_kind` of commonest words and the `per_kind` of rarest."""
    lines = sorted(_body_lines(store, rank_of(store)), key=lambda p: p.median_rank)
    return {"common": lines[:per_kind], "rare": lines[-per_kind:]}


def hover(c: LspClient, store: GeneratedStore, per_kind: int) -> dict:
    """Hover recall on each paragraph, every hover timed (the first on a file, just opened, included)."""
    result: dict = {}
    opened: set[str] = set()
    for kind, picks in hover_paragraphs(store, per_kind).items():
        lat, related = [], 0
        for rel, line, _, _ in picks:
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
        result[kind] = {**latency_summary(lat), "first_ms": round(lat[0], 2), "with_related": related}
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
    return {**latency_summary(lat), "empty": empty}


def search(c: LspClient, store: GeneratedStore, n: int) -> dict:
    lat, errors = [], 0
    for q in _queries(store, random.Random(13), n):
        secs, msg = c.call(
            "workspace/executeCommand", {"command": "kin.memory.search", "arguments": [{"query": q}]}
        )
        lat.append(secs * 1000)
        errors += "error" in msg
    return {**latency_summary(lat), "errors": errors}


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
    return latency_summary(lat)


def drop_findings_cache(store: GeneratedStore) -> None:
    """No findings cache and no check summary kept: what a first `check` meets."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        (store.root / HIDDEN_DIR / (FINDINGS_DB + suffix)).unlink(missing_ok=True)
    for summary in (store.root / HIDDEN_DIR).glob(SUMMARY_PREFIX + "*"):
        summary.unlink(missing_ok=True)


def _timed_check(store: GeneratedStore) -> tuple[float, bytes, int]:
    """One `kin-memory check` of the whole store from the editor's workspace, its output to a pipe:
    (seconds from spawn to exit, what it printed, exit code)."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [*kin_memory_cmd(), "check"],
        capture_output=True,
        env=server_env(store),
        cwd=store.alpha,
        timeout=600,
    )
    return time.perf_counter() - t0, done.stdout, done.returncode


def _findings(output: bytes) -> list[str]:
    """Each printed finding as "path:line:col: CODE severity", sorted: its message is left out, since a
    lifecycle message ("expired 6 hours ago") may rightly change between two runs."""
    return sorted(": ".join(line.split(": ", 2)[:2]) for line in output.decode(errors="replace").splitlines())


def check_cli(store: GeneratedStore, cached_runs: int, first_runs: int = 5) -> dict:
    """`kin-memory check` on the unchanged store: `first_runs` first runs, each without a findings cache
    (their median is the measure, as the read+parse floor's is), then `cached_runs` more that answer
    from the cache the last first run wrote. The second run is the measure; the later ones are kept to
    show the noise. Every run must report the same findings."""
    firsts, expected, differing = [], None, 0
    for _ in range(max(1, first_runs)):
        drop_findings_cache(store)
        os.sync()  # the last run's writes on disk first: each first run meets what the first met
        secs, first_out, rc = _timed_check(store)
        firsts.append(secs)
        found = _findings(first_out)
        if expected is None:
            expected = found
        differing += found != expected
    assert expected is not None
    cached = []
    for _ in range(cached_runs):
        secs, out, _ = _timed_check(store)
        cached.append(round(secs, 3))
        differing += _findings(out) != expected
    return {
        "first_s": round(statistics.median(firsts), 3),
        "first_min_s": round(min(firsts), 3),
        "first_runs_s": [round(s, 3) for s in firsts],
        "second_s": cached[0] if cached else None,
        "cached_runs_s": cached,
        "findings": len(expected),
        "exit_code": rc,
        "runs_with_other_findings": differing,  # every run against the first
    }
