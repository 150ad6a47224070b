"""Floors measured in the same run as the measures they bound, on the same machine and store.

- spawn → ``initialize`` answer of a minimal pygls 2 server (floor_server.py), with the interpreter that runs
  ``kin-memory serve``: the floor of cold start, warm restart and the first correct search;
- read+parse of the store in a process of its own (floor_read.py): the floor of ``kin-memory check``;
- a raw FTS5 query over the server's own recall index, one per hover paragraph (its words, any of them,
  top 5 by bm25): the floor of hover, search and workspace symbols. It is the naive lookup of the same
  words; the server may do less (it leaves the commonest words out), so a ratio below 1 is possible.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path

from kin_memory.store.paths import HIDDEN_DIR

from . import REPO
from .client import LspClient, initialize_params
from .generate import GeneratedStore
from .stats import latency_summary

PYTHON = REPO / ".venv" / "bin" / "python"  # the interpreter of `kin-memory serve` and `kin-memory check`
FLOOR_SERVER = Path(__file__).with_name("floor_server.py")
FLOOR_READ = Path(__file__).with_name("floor_read.py")
RECALL_DB = "recall.sqlite3"
FTS_SQL = "SELECT rowid, path FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT 5"


def spawn_floor(env: dict[str, str], cwd: Path, runs: int, timeout: float = 60.0) -> dict:
    """Spawn → `initialize` answer of the minimal pygls server (initialized like the real one, on the
    workspace `cwd`), `runs` times; the median is the floor."""
    samples = []
    for _ in range(runs):
        client = LspClient([str(PYTHON), str(FLOOR_SERVER)], env, cwd=cwd)
        try:
            rid = client.request("initialize", initialize_params(cwd))
            t, _, _ = client.wait(lambda m, rid=rid: m.get("id") == rid, 0, timeout)
            samples.append(t - client.started)
        finally:
            client.close()
    return {
        "median_s": round(statistics.median(samples), 3),
        "min_s": round(min(samples), 3),
        "samples_s": [round(s, 3) for s in samples],
    }


def read_parse_floor(store: GeneratedStore, env: dict[str, str], runs: int) -> dict:
    """Spawn → exit of a process that reads and parses every memory file, `runs` times (median)."""
    samples, inside, files = [], [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run(
            [str(PYTHON), str(FLOOR_READ), str(store.root)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=600,
        )
        samples.append(time.perf_counter() - t0)
        report = json.loads(done.stdout.strip().splitlines()[-1])
        inside.append(report["in_process_s"])
        files = report["files"]
    return {
        "median_s": round(statistics.median(samples), 3),
        "min_s": round(min(samples), 3),
        "samples_s": [round(s, 3) for s in samples],
        "in_process_median_s": round(statistics.median(inside), 3),
        "files": files,
    }


def match_any(words: list[str]) -> str:
    """An FTS5 expression matching any of the words (each quoted: a word is never an operator)."""
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


def recall_db(store: GeneratedStore) -> Path:
    return store.root / HIDDEN_DIR / RECALL_DB


def fts_floor(store: GeneratedStore, queries: dict[str, list[list[str]]], rounds: int) -> dict:
    """Each kind's queries (lists of words) as raw FTS5 top-5 bm25 queries over the recall index, read
    only, `rounds` times over; every query is timed, the first included. "all" pools every kind."""
    conn = sqlite3.connect(f"file:{recall_db(store)}?mode=ro", uri=True)
    try:
        by_kind: dict[str, list[float]] = {}
        for kind, word_lists in queries.items():
            lat = by_kind.setdefault(kind, [])
            for _ in range(rounds):
                for words in word_lists:
                    expr = match_any(words)
                    t0 = time.perf_counter()
                    conn.execute(FTS_SQL, (expr,)).fetchall()
                    lat.append((time.perf_counter() - t0) * 1000)
    finally:
        conn.close()
    out = {kind: latency_summary(lat) for kind, lat in by_kind.items()}
    out["all"] = latency_summary([x for lat in by_kind.values() for x in lat])
    out["sql"] = FTS_SQL
    return out
