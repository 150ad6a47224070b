"""Benchmark the kin-memory server against the SPEC §10 budgets, its floors (and, with --peers, peers).

    .venv/bin/python scripts/bench/run.py                    # 10k store
    .venv/bin/python scripts/bench/run.py --sizes 10k,100k --peers

One run prints, per size, each measure with its budget, PASS/MISS and its ratio to the floor that bounds
it, measured in the same run (spawn → `initialize` of a minimal pygls server; read+parse of the store; a
raw FTS5 query over the recall index), then the floors, then the peers.

Stores (reused when seed and size match), peer installs and JSON results live in the git-ignored .bench/
folder. Every server started is shut down and its process group killed. BENCH_PEER_TIMEOUT (seconds, default
1800) bounds each peer step: basic-memory indexes roughly 10 files a second. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "bench"  # noqa: A001

from bench import CACHE  # noqa: E402
from bench.generate import generate, parse_size, size_label  # noqa: E402
from bench.report import floors_table, table  # noqa: E402
from bench.suite import run_size  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k", help="comma-separated store sizes: 1k, 10k, 100k (default 10k)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--peers", action="store_true", help="also measure vscode-markdown-languageserver and basic-memory"
    )
    ap.add_argument("--quick", action="store_true", help="fewer samples per measure")
    ap.add_argument(
        "--out", type=Path, default=None, help="JSON result file (default .bench/results/<time>.json)"
    )
    args = ap.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    results: dict[str, dict] = {}
    peers: dict[str, dict] = {}
    for n in sizes:
        label = size_label(n)
        store = generate(n, args.seed)
        print(f"{label}: store {store.root}")
        results[label] = run_size(store, args.quick)
        if args.peers:
            from bench.peers import run_peers

            peers[label] = run_peers(store, results[label])
    bm_run = None
    if args.peers:
        from bench.peers import BASIC_MEMORY_SIZE, run_basic_memory

        label = size_label(BASIC_MEMORY_SIZE)
        store = generate(BASIC_MEMORY_SIZE, args.seed)
        print(f"{label} (for basic-memory): store {store.root}")
        ours = results[label] if label in results else run_size(store, args.quick)
        bm_run = run_basic_memory(store, ours)
    print()
    print(table(results))
    print()
    print(floors_table(results))
    if args.peers:
        from bench.peers import peer_table

        print()
        print(peer_table(peers, results, bm_run))
    out = args.out or CACHE / "results" / time.strftime("%Y%m%dT%H%M%S.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "when": time.time(),
                "machine": platform.platform(),
                "python": sys.version,
                "seed": args.seed,
                "results": results,
                "peers": peers,
                "basic_memory": bm_run,
            },
            indent=2,
        )
    )
    print(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
