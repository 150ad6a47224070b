"""The MCP round trip on a large store: p50/p95 of a `view` and a `str_replace` through `kin-memory mcp`,
timed at the client (the official MCP client over stdio), for both protocol eras. Not part of the tests.

    .venv/bin/python scripts/bench/mcp_roundtrip.py [--size 10k] [--calls 200] [--seed 7]

A copy of the seeded bench store is made in a temporary folder (the cached store is never written) and
caught up once (the history baseline an editor's first start makes), so each write also keeps its
version and its audit line, as in use. The client declares the store's `alpha` repository as its root.
Each call views one of the ~2 KB memories, or replaces a word in it and back; every tenth round a
`memory_search` (more than 2 s after the last one, so the server looks at the whole store again) and the
prompt-block resource (the whole store read) are timed, then 50 searches back to back.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    __package__ = "scripts.bench"

from mcp import Client, StdioServerParameters, types  # noqa: E402

from kin_memory.history.sync import catch_up  # noqa: E402

from .generate import generate, parse_size  # noqa: E402
from .stats import latency_summary  # noqa: E402


async def measure(root: Path, home: Path, alpha: Path, files: list[str], calls: int, mode: str) -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kin_memory", "mcp"],
        env={**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(home)},
        cwd=str(home),
    )

    async def roots(_ctx: object) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=alpha.as_uri())])

    rnd = random.Random(11)
    timings: dict[str, list[float]] = {
        "view": [], "str_replace": [], "memory_search": [], "search, burst": [], "prompt-block": []
    }  # fmt: skip

    async def timed(kind: str, call) -> object:
        started = time.perf_counter()
        result = await call
        timings[kind].append((time.perf_counter() - started) * 1000)
        if getattr(result, "is_error", False):
            raise SystemExit(f"{kind} failed: {result.content[0].text}")
        return result

    started = time.perf_counter()
    async with Client(params, mode=mode, list_roots_callback=roots) as client:
        connect_ms = (time.perf_counter() - started) * 1000
        await client.call_tool("memory", {"command": "view", "path": "/memories"})  # roots asked once
        for n in range(calls):
            vpath = "/memories/" + rnd.choice(files)
            await timed("view", client.call_tool("memory", {"command": "view", "path": vpath}))
            text = (root / vpath[len("/memories/") :]).read_text()
            words = [w for w in text.split() if w.isalpha() and len(w) > 4 and text.count(w) == 1]
            if not words:
                continue
            word = rnd.choice(words)
            edit = {"command": "str_replace", "path": vpath, "old_str": word, "new_str": word.upper()}
            await timed("str_replace", client.call_tool("memory", edit))
            back = {"command": "str_replace", "path": vpath, "old_str": word.upper(), "new_str": word}
            await client.call_tool("memory", back)
            if n % 10 == 0:
                query = " ".join(rnd.sample(words, min(2, len(words))))
                await timed("memory_search", client.call_tool("memory_search", {"query": query}))
                await timed("prompt-block", client.read_resource("memory://prompt-block"))
        for _ in range(50):  # back to back: the index is current, no look at the disk
            query = " ".join(rnd.sample(words, min(2, len(words)))) if words else "deploy"
            await timed("search, burst", client.call_tool("memory_search", {"query": query}))
    return {"connect_ms": round(connect_ms, 1), **{k: latency_summary(v) for k, v in timings.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--size", default="10k")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    store = generate(parse_size(args.size), seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="kin-mcp-bench-") as tmp:
        root = Path(tmp) / "memory"
        shutil.copytree(store.root, root, symlinks=True)
        home = Path(tmp) / "home"
        home.mkdir()
        started = time.perf_counter()
        catch_up(root)
        print(f"{args.size} store copied and caught up in {time.perf_counter() - started:.1f} s")
        for mode in ("auto", "legacy"):
            era = "2026 era (the client's default)" if mode == "auto" else "handshake era (initialize)"
            result = asyncio.run(measure(root, home, store.alpha, store.two_kb, args.calls, mode))
            print(f"{era}: connect {result.pop('connect_ms')} ms")
            for kind, summary in result.items():
                print(
                    f"  {kind:14} p50 {summary['p50_ms']:7.2f} ms  p95 {summary['p95_ms']:7.2f} ms  (n={summary['n']})"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
