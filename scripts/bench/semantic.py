"""The semantic layer's measures: the background fill and its floor, recall after the fill, and the
command line's cold `search`, which loads the model.

The fill's floor is the embedding cost of one memory (title and body, one text per call, one thread, in
this process) times the memories: the fill cannot beat it, and its budget is 12 ms × memories.
"""

from __future__ import annotations

import random
import re
import statistics
import subprocess
import time

from kin_memory.store.memory import load
from kin_memory.store.paths import virtual_of_rel

from .client import LspClient
from .floor_read import memory_files
from .generate import GeneratedStore
from .measure import kin_memory_cmd, server_env

FILLED = re.compile(r"semantic layer filled: ([\d,]+) memor(?:y|ies) embedded in ([\d.]+)s")


def embed_floor(store: GeneratedStore, n: int = 100) -> dict:
    """Milliseconds to embed one memory (median of n, picked at random), and that × the store."""
    from kin_memory.recall.semantic.model import Embedder
    from kin_memory.recall.semantic.vectors import embedded_text

    files = list(memory_files(str(store.root)))
    picks = random.Random(5).sample(files, min(n, len(files)))
    texts = []
    for path, rel in picks:
        m = load(path, virtual_of_rel(rel))
        texts.append(embedded_text(m.title, m.body))
    t0 = time.perf_counter()
    model = Embedder()
    load_s = time.perf_counter() - t0
    samples = []
    for text in texts:
        t0 = time.perf_counter()
        model.embed(text)
        samples.append((time.perf_counter() - t0) * 1000)
    per = statistics.median(samples)
    query = []
    for text in texts[:30]:
        t0 = time.perf_counter()
        model.embed(" ".join(text.split()[:8]))
        query.append((time.perf_counter() - t0) * 1000)
    return {
        "per_memory_ms": round(per, 2),
        "per_query_ms": round(statistics.median(query), 2),
        "model_load_s": round(load_s, 3),
        "floor_s": round(per * store.files / 1000, 1),
    }


def wait_filled(c: LspClient, start: int, timeout: float) -> dict:
    """The server's line saying the layer is complete: how many it embedded and in how long."""
    t, msg, _ = c.wait(
        lambda m: (
            m.get("method") == "window/logMessage" and "semantic layer filled" in m["params"]["message"]
        ),
        start,
        timeout,
    )
    found = FILLED.search(msg["params"]["message"])
    embedded = int(found.group(1).replace(",", "")) if found else None
    return {"at": t, "embedded": embedded, "fill_s": float(found.group(2)) if found else None}


def cli_search(store: GeneratedStore, semantic: str, runs: int = 3) -> dict:
    """`kin-memory search` from a fresh process over the filled index (the model loaded for the query):
    spawn to exit, median of runs."""
    env = {**server_env(store), "KIN_RECALL_SEMANTIC": semantic}
    words = store.vocab
    samples = []
    for i in range(runs):
        query = f"how do we handle {words[100 + i]} and {words[2000 + i]}"
        t0 = time.perf_counter()
        subprocess.run(
            [*kin_memory_cmd(), "search", query], capture_output=True, env=env, cwd=store.alpha, timeout=300
        )
        samples.append(time.perf_counter() - t0)
    return {"median_s": round(statistics.median(samples), 3), "samples_s": [round(s, 3) for s in samples]}
