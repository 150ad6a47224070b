"""An agent's first look at a large store: `view /memories` filtered by its workspace, against the
operator's unfiltered listing (the floor), from the command line and over MCP; `rename`; and the
`memory://prompt-block` resource. Not part of the tests.

    .venv/bin/python scripts/bench/first_look.py [--size 10k] [--runs 5] [--calls 20] [--seed 7]

`make bench` runs it for every size and reports it beside the other measures.

A copy of the seeded bench store is made in a temporary folder and caught up once (the history baseline
an editor's first start makes); its recall index is built once, as an editor or an MCP server that ran
before leaves it. Budgets (docs/performance.md): the filtered CLI view at most 2× the operator's
listing; over MCP, warm `view /memories` and the prompt block at most 150 ms at 10k; `rename` flat in
the store's size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    __package__ = "scripts.bench"

from mcp import Client, StdioServerParameters, types  # noqa: E402

from kin_memory.history.sync import catch_up  # noqa: E402
from kin_memory.recall.service import Recall, sync_quietly  # noqa: E402

from .generate import GeneratedStore, generate, parse_size  # noqa: E402
from .stats import latency_summary  # noqa: E402

VIEW = json.dumps({"command": "view", "path": "/memories"})
SMALL_STORE = 200  # memories in the store whose rename is the floor of "flat in the store's size"


def cli_view(root: Path, home: Path, workspace: str, runs: int) -> float:
    """The median wall time (ms) of `kin-memory tool VIEW --workspace W` through a pipe."""
    env = {**os.environ, "HOME": str(home)}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "kin_memory", "tool", VIEW, "--root", str(root), "--workspace", workspace],
            capture_output=True, env=env, cwd=str(home), check=False,
        )  # fmt: skip
        times.append((time.perf_counter() - started) * 1000)
        if out.returncode != 0:
            raise SystemExit(f"view failed: {out.stdout[:200]!r} {out.stderr[:400]!r}")
    return round(statistics.median(times), 1)


async def mcp_measures(
    root: Path, home: Path, alpha: Path, files: list[str], calls: int, renames_only: bool = False
) -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kin_memory", "mcp"],
        env={**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(home)},
        cwd=str(home),
    )

    async def roots(_ctx: object) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=alpha.as_uri())])

    kinds = (
        ("first rename", "rename")
        if renames_only
        else ("first view", "view", "first rename", "rename", "first prompt-block", "prompt-block")
    )
    timings: dict[str, list[float]] = {kind: [] for kind in kinds}

    async def timed(kind: str, call) -> object:
        started = time.perf_counter()
        result = await call
        timings[kind].append((time.perf_counter() - started) * 1000)
        if getattr(result, "is_error", False):
            raise SystemExit(f"{kind} failed: {result.content[0].text}")
        return result

    rnd = random.Random(5)
    async with Client(params, list_roots_callback=roots) as client:
        if not renames_only:
            await timed("first view", client.call_tool("memory", {"command": "view", "path": "/memories"}))
            for _ in range(calls):
                await timed("view", client.call_tool("memory", {"command": "view", "path": "/memories"}))
        # The first rename of a process brings the recall index up to date (a stat per memory), as the
        # first search does: timed apart from the warm ones.
        for n in range(calls + 1):
            rel = rnd.choice(files)
            old, new = "/memories/" + rel, f"/memories/{rel[:-3]}-moved{n}.md"
            await timed(
                "first rename" if n == 0 else "rename",
                client.call_tool("memory", {"command": "rename", "old_path": old, "new_path": new}),
            )
            await client.call_tool("memory", {"command": "rename", "old_path": new, "new_path": old})
        if not renames_only:  # the first read of a process is a full pass, timed apart like the others
            for n in range(calls + 1):
                await timed(
                    "first prompt-block" if n == 0 else "prompt-block",
                    client.read_resource("memory://prompt-block"),
                )
    return {k: latency_summary(v) for k, v in timings.items()}


def first_look(store: GeneratedStore, runs: int = 5, calls: int = 20) -> dict:
    """The measures on a copy of the store: the command line's views (medians, ms) and the MCP calls."""
    with tempfile.TemporaryDirectory(prefix="kin-first-look-") as tmp:
        root = Path(tmp) / "memory"
        shutil.copytree(store.root, root, symlinks=True)
        home = Path(tmp) / "home"
        home.mkdir()
        alpha = str(os.path.realpath(store.alpha))
        cold = cli_view(root, home, alpha, 1)  # no recall index yet: every stamp read from its file
        catch_up(root)
        sync_quietly(Recall(root))
        floor = cli_view(root, home, "none", runs)
        filtered = cli_view(root, home, alpha, runs)
        mine = [f for f in store.two_kb if f"workspace: {alpha}\n" in (root / f).read_text()]
        mcp = asyncio.run(mcp_measures(root, home, store.alpha, mine, calls))
        # Flat in the store's size: the same renames in a store of SMALL_STORE of the same memories.
        small = Path(tmp) / "small"
        small_copy(root, small, mine)
        catch_up(small)
        sync_quietly(Recall(small))
        small_mcp = asyncio.run(mcp_measures(small, home, store.alpha, mine, calls, renames_only=True))
    return {
        "cli": {"floor_ms": floor, "filtered_ms": filtered, "no_index_ms": cold, "runs": runs},
        "mcp": mcp,
        "small_store": {"memories": SMALL_STORE, "mcp": small_mcp},
    }


def small_copy(root: Path, small: Path, keep: list[str]) -> None:
    """A store of SMALL_STORE memories: `keep` and the first others of the listing, in their folders."""
    rels = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".kin-index" not in p.parts)
    picked = list(dict.fromkeys([*keep, *rels]))[:SMALL_STORE]
    for rel in picked:
        (small / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, small / rel)


def print_first_look(label: str, result: dict) -> None:
    cli = result["cli"]
    floor, filtered = cli["floor_ms"], cli["filtered_ms"]
    print(f"{label}: command line `view /memories` (median of {cli['runs']})")
    print(f"  operator's listing (floor) {floor:8.1f} ms")
    print(f"  filtered by workspace      {filtered:8.1f} ms  ({filtered / floor:.2f}× the floor; budget 2×)")
    print(f"  filtered, no recall index  {cli['no_index_ms']:8.1f} ms  (one run)")
    print("  over MCP (the official client, a root in alpha):")
    for kind, s in result["mcp"].items():
        print(f"    {kind:18} p50 {s['p50_ms']:8.2f} ms  p95 {s['p95_ms']:8.2f} ms  (n={s['n']})")
    small = result["small_store"]
    s = small["mcp"]["rename"]
    print(
        f"    rename in a {small['memories']}-memory store: p50 {s['p50_ms']:8.2f} ms  p95 {s['p95_ms']:8.2f} ms"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--size", default="10k")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    store = generate(parse_size(args.size), seed=args.seed)
    print_first_look(args.size, first_look(store, args.runs, args.calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
