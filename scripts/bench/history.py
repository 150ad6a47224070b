"""The version store's cost: bytes per kept version on a 10k store after 1,000 edits, and the time the
history adds to a memory-tool write (p50/p95). Not part of the test suite.

    .venv/bin/python scripts/bench/history.py [--size 10k] [--edits 1000] [--seed 7]

A copy of the seeded bench store is made in a temporary folder (the cached store is never written).
The first catch-up keeps every memory once (the baseline a first start makes); then each edit is an
`insert` through the tool, alternately with history and with the history hook replaced by a no-op, so
both timings see the same disk and cache conditions.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    __package__ = "scripts.bench"

from kin_memory.history.db import database  # noqa: E402
from kin_memory.history.sync import catch_up  # noqa: E402
from kin_memory.store.store import scan  # noqa: E402
from kin_memory.tool.commands import ToolContext, dispatch, run_tool  # noqa: E402

from .generate import generate, parse_size  # noqa: E402


def db_bytes(root: Path) -> int:
    """The version database on disk, its write-ahead log folded in first."""
    with database(root).transaction():
        pass
    conn = sqlite3.connect(root / ".kin-index" / "history.sqlite3")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(f.stat().st_size for f in (root / ".kin-index").glob("history.sqlite3*"))


def counts(root: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(root / ".kin-index" / "history.sqlite3")
    try:
        versions = conn.execute("SELECT count(*) FROM versions").fetchone()[0]
        blobs, stored = conn.execute("SELECT count(*), total(stored) FROM blobs").fetchone()
        return versions, blobs, int(stored)
    finally:
        conn.close()


def edit(root: Path, vpath: str, n: int, rnd: random.Random) -> float:
    words = " ".join(
        rnd.choice(("cache", "deploy", "review", "canary", "index", "rollback")) for _ in range(8)
    )
    started = time.perf_counter()
    res = run_tool({"command": "insert", "path": vpath, "insert_line": 0 if n % 2 else 4,
                    "insert_text": f"Edit {n}: {words}."}, ToolContext(root=root))  # fmt: skip
    took = time.perf_counter() - started
    if res.is_error:
        raise SystemExit(f"edit {n} of {vpath} failed: {res.content}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="10k")
    ap.add_argument("--edits", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    store = generate(parse_size(args.size), seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="kin-history-bench-") as tmp:
        root = Path(tmp) / "memory"
        shutil.copytree(store.root, root, symlinks=True)
        files = [vpath for _path, vpath, is_index in scan(root)[0] if not is_index]
        store_bytes = sum(p.stat().st_size for p, _v, _i in scan(root)[0])
        started = time.perf_counter()
        catch_up(root)
        baseline_s = time.perf_counter() - started
        base_db = db_bytes(root)
        base_versions, _blobs, base_stored = counts(root)
        again = time.perf_counter()
        catch_up(root)
        unchanged_s = time.perf_counter() - again

        rnd = random.Random(args.seed)
        with_history: list[float] = []
        without: list[float] = []
        real_kept = dispatch.kept
        for n in range(2 * args.edits):
            vpath = rnd.choice(files)
            if n % 2 == 0:
                dispatch.kept = real_kept  # type: ignore[assignment]
                with_history.append(edit(root, vpath, n, rnd))
            else:
                dispatch.kept = lambda *_a, **_k: contextlib.nullcontext()  # type: ignore[assignment]
                without.append(edit(root, vpath, n, rnd))
        dispatch.kept = real_kept  # type: ignore[assignment]
        # the edits made without the hook are caught up like writes made while no server watched
        end_db = db_bytes(root)
        versions, blobs, stored = counts(root)

    added = versions - base_versions

    def ms(xs: list[float], q: float) -> float:
        ordered = sorted(xs)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000

    print(f"store: {len(files):,} memories, {store_bytes / 1e6:.1f} MB of files")
    print(f"first catch-up (baseline, every memory kept once): {baseline_s:.2f} s, database {base_db / 1e6:.2f} MB "
          f"({base_db / len(files):.0f} bytes per memory, content {base_stored / 1e6:.2f} MB compressed)")  # fmt: skip
    print(f"catch-up over the unchanged store: {unchanged_s * 1000:.0f} ms")
    print(f"{args.edits:,} tool edits with history: {added:,} versions kept, database +{(end_db - base_db) / 1e6:.2f} MB "
          f"= {(end_db - base_db) / max(added, 1):.0f} bytes per version "
          f"(content {(stored - base_stored) / max(added, 1):.0f} bytes compressed; {blobs:,} distinct contents)")  # fmt: skip
    print(f"tool write (insert) p50/p95: {ms(with_history, 0.5):.2f}/{ms(with_history, 0.95):.2f} ms with history, "
          f"{ms(without, 0.5):.2f}/{ms(without, 0.95):.2f} ms without: "
          f"+{ms(with_history, 0.5) - ms(without, 0.5):.2f} ms p50, +{ms(with_history, 0.95) - ms(without, 0.95):.2f} ms p95")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
