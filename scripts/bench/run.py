"""Benchmark the kin-memory server against the SPEC §10 budgets (and, with --peers, against peers).

    .venv/bin/python scripts/bench/run.py                    # 10k store
    .venv/bin/python scripts/bench/run.py --sizes 10k,100k --peers

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
from bench.measure import run_size  # noqa: E402

# (measure key, label, {size: budget}, unit). Workspace symbols and search have no SPEC row of their own:
# both are recall queries, so they are held to the hover-recall budget.
BUDGETS = [
    ("cold", "cold start → complete store diagnostics", {10_000: 1.0, 100_000: 8.0}, "s"),
    ("warm", "warm restart → complete diagnostics", {10_000: 0.4, 100_000: 1.5}, "s"),
    ("warm_sync", "warm restart → recall index synced", {10_000: 0.4, 100_000: 1.5}, "s"),
    ("did_change", "didChange → publishDiagnostics 2 KB, p95", {10_000: 5, 100_000: 5}, "ms"),
    ("hover_common", "hover recall p95, common-term paragraphs", {10_000: 10, 100_000: 30}, "ms"),
    ("hover_rare", "hover recall p95, rare-term paragraphs", {10_000: 10, 100_000: 30}, "ms"),
    ("workspace_symbol", "workspace symbol p95 (hover budget)", {10_000: 10, 100_000: 30}, "ms"),
    ("search", "kin.memory.search p95 (hover budget)", {10_000: 10, 100_000: 30}, "ms"),
    ("external_write", "external write → diagnostics, max", {10_000: 500, 100_000: 500}, "ms"),
    ("rss", "peak RSS, server process tree", {10_000: 120, 100_000: 300}, "MB"),
]


def value(result: dict, key: str) -> float | None:
    try:
        return {
            "cold": lambda r: r["cold"]["diagnostics_s"],
            "warm": lambda r: r["warm"]["diagnostics_s"],
            "warm_sync": lambda r: r["warm"]["recall_sync_s"],
            "did_change": lambda r: r["did_change"]["p95_ms"],
            "hover_common": lambda r: r["hover"]["common"]["p95_ms"],
            "hover_rare": lambda r: r["hover"]["rare"]["p95_ms"],
            "workspace_symbol": lambda r: r["workspace_symbol"]["p95_ms"],
            "search": lambda r: r["search"]["p95_ms"],
            "external_write": lambda r: r["external_write"]["max_ms"],
            "rss": lambda r: max(r["rss_cold"]["peak_tree_rss_mb"], r["rss_warm"]["peak_tree_rss_mb"]),
        }[key](result)
    except (KeyError, TypeError):
        return None


def _budget_for(budgets: dict[int, float], n: int) -> float:
    # Sizes other than 10k/100k are held to the nearer budget.
    return budgets[10_000] if n <= 31_623 else budgets[100_000]


def table(results: dict[str, dict]) -> str:
    sizes = list(results)
    head = "| measure | " + " | ".join(sizes) + " | budget | PASS/MISS |"
    rows = [head, "|" + "---|" * (len(sizes) + 3)]
    for key, label, budgets, unit in BUDGETS:
        cells, verdicts, budget_txt = [], [], []
        for s in sizes:
            v = value(results[s], key)
            b = _budget_for(budgets, results[s]["files"])
            cells.append("—" if v is None else f"{v:g} {unit}")
            budget_txt.append(f"≤ {b:g} {unit}")
            verdicts.append("—" if v is None else ("PASS" if v <= b else "MISS"))
        rows.append(
            f"| {label} | "
            + " | ".join(cells)
            + f" | {' / '.join(dict.fromkeys(budget_txt))} | "
            + " / ".join(verdicts)
            + " |"
        )
    return "\n".join(rows)


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
    print()
    print(table(results))
    if args.peers:
        from bench.peers import peer_table

        print()
        print(peer_table(peers, results))
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
            },
            indent=2,
        )
    )
    print(f"\nresults written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
