"""One size's run: the server's measures, the first correct search, `kin-memory check`, and the floors."""

from __future__ import annotations

import os
import shutil
import time

from kin_memory.store.paths import HIDDEN_DIR  # the persistent recall index and findings cache live there

from .burst import burst_hover
from .client import RssSampler
from .first_look import first_look
from .first_search import first_search_measures
from .floor_read import memory_files
from .floors import fts_floor, read_parse_floor, spawn_floor
from .generate import GeneratedStore
from .measure import (
    check_cli,
    did_change,
    external_write,
    hover,
    hover_paragraphs,
    search,
    server_env,
    start,
    timed_start,
    workspace_symbol,
)
from .semantic import cli_search, embed_floor, wait_filled

# The fill is waited for (then hover, symbols and search measured again) up to this many memories. At
# 100k the fill takes about an hour on a 2-core machine (its budget is per memory: the 10k row shows it);
# the 100k measures of the layer on are of a server filling in the background. BENCH_FILL_MAX_FILES.
FILL_WAIT_MAX_FILES = int(os.environ.get("BENCH_FILL_MAX_FILES", "20000"))


def settle(store: GeneratedStore) -> None:
    """Put the store in the state the floors are measured in (SPEC §10: "reading 10k small files warm"):
    no writeback pending and every memory file in the page cache. Without it the cold start measured
    the disk, not the server: the generator re-stamps every file's mtime just before (a 100k store's
    inodes were still being written back during the start), and the peers' half hour on the previous
    size had pushed the files out of the cache (a 100k cold start of 17.5 s against 9.2–9.6 s settled)."""
    os.sync()
    for path, _rel in memory_files(str(store.root)):
        with open(path, "rb") as f:
            while f.read(1 << 16):
                pass


def server_measures(
    store: GeneratedStore, quick: bool, timeout: float, log=print, semantic: str = "on"
) -> dict:
    """Cold start (no hidden folder; the store settled like the floors) and the measures on that server,
    then a warm restart. With the semantic layer on (the default) the measures run while it fills in the
    background; then the fill is waited for, and hover, symbols and search are measured again."""
    rounds = 60 if quick else 200
    # Timed and memory-sampled in separate starts (see timed_start); each cold: no persistent index, no
    # cache, the store settled.
    shutil.rmtree(store.root / HIDDEN_DIR, ignore_errors=True)
    settle(store)
    cold = timed_start(store, timeout, semantic)
    log(f"  cold start: diagnostics {cold['diagnostics_s']}s, recall synced {cold['recall_sync_s']}s")
    shutil.rmtree(store.root / HIDDEN_DIR, ignore_errors=True)
    settle(store)
    c, rss, sampled = start(store, timeout, semantic)
    out: dict = {"files": store.files, "cold": cold, "cold_sampled": sampled}
    try:
        log(f"  cold start, memory sampled: diagnostics {sampled['diagnostics_s']}s")
        out["did_change"] = did_change(c, store, rounds)
        out["hover"] = hover(c, store, hover_per_kind(quick))
        out["workspace_symbol"] = workspace_symbol(c, store, 10 if quick else 30)
        out["search"] = search(c, store, 30 if quick else 100)
        out["external_write"] = external_write(c, store, 5 if quick else 10)
        measured = time.monotonic()
        log("  measured didChange, hover, workspace symbols, search, external writes")
        if semantic == "on" and store.files > FILL_WAIT_MAX_FILES:
            out["fill"] = {"waited": False}
            log(f"  semantic layer fill not waited for ({store.files} memories; see FILL_WAIT_MAX_FILES)")
        elif semantic == "on":
            filled = wait_filled(c, 0, timeout + store.files * 0.5)  # a loaded machine: minutes at 10k
            out["fill"] = {"fill_s": filled["fill_s"], "embedded": filled["embedded"],
                           "measures_ended_before_fill": measured < filled["at"]}  # fmt: skip
            log(f"  semantic layer filled: {filled['embedded']} memories in {filled['fill_s']}s")
            out["after_fill"] = {
                "hover": hover(c, store, hover_per_kind(quick)),
                "workspace_symbol": workspace_symbol(c, store, 10 if quick else 30),
                "search": search(c, store, 30 if quick else 100),
            }
            log("  measured hover, workspace symbols, search after the fill")
        # The memory rows are the store's: the burst (50 buffers, 5,000 versions) is sampled on its own.
        out["rss_cold"] = rss.stop()
        burst_rss = RssSampler(c.proc.pid)
        out["burst"] = burst_hover(c, store)
        out["burst"]["rss"] = burst_rss.stop()
        log(f"  hover p95 during a 5,000-didChange burst: {out['burst']['ratio_p95']}× the idle p95")
    finally:
        if "rss_cold" not in out:
            out["rss_cold"] = rss.stop()
        c.close()
    # Warm: same store, the index left by the first run; what that run wrote (some 600 MB of recall index,
    # history and findings cache at 100k) on disk first, or its writeback is measured with the start.
    os.sync()
    out["warm"] = warm = timed_start(store, timeout, semantic)
    log(f"  warm restart: diagnostics {warm['diagnostics_s']}s, recall synced {warm['recall_sync_s']}s")
    os.sync()
    c, rss, out["warm_sampled"] = start(store, timeout, semantic)
    try:
        log(f"  warm restart, memory sampled: diagnostics {out['warm_sampled']['diagnostics_s']}s")
    finally:
        out["rss_warm"] = rss.stop()
        c.close()
    return out


def hover_per_kind(quick: bool) -> int:
    return 20 if quick else 50


def floors(store: GeneratedStore, quick: bool, log=print) -> dict:
    """The floors, each with no server running. The FTS5 floor reads the recall index the server
    measures left, with the words of the paragraphs the hover measure hovered."""
    runs = 3 if quick else 5
    paragraphs = hover_paragraphs(store, hover_per_kind(quick))
    queries = {kind: [p.words for p in picks] for kind, picks in paragraphs.items()}
    out = {
        "fts": fts_floor(store, queries, rounds=2 if quick else 5),
        "read_parse": read_parse_floor(store, server_env(store), runs),
        "spawn": spawn_floor(server_env(store), store.alpha, runs),
    }
    log(
        f"  floors: spawn → initialize {out['spawn']['median_s']}s, read+parse {out['read_parse']['median_s']}s, "
        f"FTS5 p95 {out['fts']['common']['p95_ms']} ms common / {out['fts']['rare']['p95_ms']} ms rare"
    )
    return out


def run_size(store: GeneratedStore, quick: bool, log=print, semantic_off: bool = True) -> dict:
    timeout = 60 + store.files / 500
    out = server_measures(store, quick, timeout, log)
    out["embed"] = embed_floor(store)
    log(
        f"  embedding floor: {out['embed']['per_memory_ms']} ms per memory, {out['embed']['floor_s']}s for the store"
    )
    out["cli_search"] = {"on": cli_search(store, "on"), "off": cli_search(store, "off")}
    log(
        f"  kin-memory search, cold: {out['cli_search']['on']['median_s']}s on, {out['cli_search']['off']['median_s']}s off"
    )
    if semantic_off:  # the old budgets, with the layer off
        log("  the same with recall.semantic off:")
        out["off"] = server_measures(store, quick, timeout, log, semantic="off")
    # The floors and the first checks are measured settled, as the cold start is: the servers above wrote
    # hundreds of MB (recall index, history, findings cache) still being written back, which slowed
    # whatever ran next (a 10k store's five first checks fell from 0.85 s to 0.55 s one after another).
    settle(store)
    out["floors"] = floors(store, quick, log)  # the FTS5 floor before the probes below change the index
    out["first_search"] = first_search_measures(store, timeout, log)
    settle(store)
    out["check"] = check_cli(store, cached_runs=3, first_runs=3 if quick else 5)
    log(f"  kin-memory check: first {out['check']['first_s']}s, second {out['check']['second_s']}s")
    out["first_look"] = first_look(store, runs=3 if quick else 5, calls=10 if quick else 20)
    look = out["first_look"]
    log(
        f"  an agent's first look: `view /memories` {look['cli']['filtered_ms']} ms filtered, "
        f"{look['cli']['floor_ms']} ms unfiltered (command line); over MCP p95 {look['mcp']['view']['p95_ms']} ms"
    )
    return out
