"""Where the cold paths spend their time: the first `kin-memory check` and the server's cold start, sampled.

Each is run under py-spy (every process of the tree, idle samples kept), and every sample is put in one
row: read, parse, per-file findings, secrets, whole-store passes, database writes, waiting... Shares of
samples do not depend on how busy the machine is the way seconds do, so the table stays comparable on a
shared or slow machine. Needs `py-spy` (``pip install py-spy``) and a generated store:

    python -m scripts.bench.profile_cold --size 10k [--what check,start] [--rate 250]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "bench"

from .client import LspClient, initialize_params  # noqa: E402
from .generate import generate, parse_size  # noqa: E402
from .measure import drop_findings_cache, server_env  # noqa: E402
from .suite import settle  # noqa: E402

# (row, pattern over the stack joined root → leaf): the first that matches names the sample.
ROWS: list[tuple[str, str]] = [
    (
        "waiting (threads parked on events, queues, pipes)",
        r"(Condition\.wait|_worker \(concurrent/futures/thread\.py:\d+\)|Thread\.join|_wait_for_tstate_lock|select|_read_exact|_read_more)[^;]*$",
    ),
    (
        "imports and interpreter start",
        r"_find_and_load|_run_module_as_main \(<frozen runpy>:\d+\);<module>[^;]*$",
    ),
    (
        "after the answer: segment snapshots made and written (a worker's write-back)",
        r"check\.<locals>\.done|_write_back \(kin_memory/lsp",
    ),
    ("entries kept for after the answer (scratch file)", r"_Spill|_SnapshotSink\.(checked|_wait)"),
    ("whole-store: duplicates, contradictions (KM601/KM604)", r"duplicate_findings|contradiction"),
    ("whole-store: recall index (lexical)", r"kin_memory/recall/"),
    ("per-file findings: secrets (KM2xx scan)", r"check_memory .*_secrets"),
    (
        "whole-store: MEMORY.md, prompt block, scan problems",
        r"check_through_cache \([^;]*;(check_memory|compose)|scan_findings|Store\.adopt",
    ),
    ("per-file findings", r"check_memory"),
    ("server: memories made from the workers' records", r"make_memories"),
    ("parse (frontmatter, memory)", r"from_text|from_record"),
    ("read (open, stat, read)", r"\bload \(kin_memory/store/memory|seen_at|_stat_files"),
    ("scan (list the store)", r"scan_names|_scan \(|kept \(kin_memory/caches/listing"),
    ("summary key: a stat per file (CLI)", r"key_at|_summarised_store_part\.<locals>\.<genexpr>"),
    ("per-file cache entry: record and payload as JSON", r"_payload|record_text|record_of|next_change"),
    (
        "database writes (findings cache, snapshots, listing)",
        r"write_back|_save_summary|put_summary|sink\.|_SnapshotSink|keep_listing|\bstore \(kin_memory/caches/findings|finish \(kin_memory",
    ),
    ("database reads (findings cache)", r"lookup_batches|FindingsCache|holds_any|entries_of_this_code"),
    ("sending to the server / editor (pickle, frames)", r"_ToServer|_Outbox|_send|_gather|_Incoming|frame"),
    ("output (render, print, summary)", r"_segments|_render|_decode|_part_of|_output|_summary|print"),
]


def classify(stack: str) -> str:
    for row, pattern in ROWS:
        if re.search(pattern, stack):
            return row
    return "other"


def parse_raw(path: Path, show: str = "") -> tuple[Counter[str], Counter[str]]:
    """(samples per row, samples per process) of a py-spy raw (collapsed) file; the commonest stack
    ends of row `show` are printed (to place what lands in "other")."""
    rows: Counter[str] = Counter()
    procs: Counter[str] = Counter()
    ends: Counter[str] = Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        row = classify(stack)
        rows[row] += int(count)
        procs[[f for f in stack.split(";") if f.startswith("process ")][-1].split(":", 1)[0]] += int(count)
        if show and row.startswith(show):
            ends[";".join(stack.split(";")[-4:])] += int(count)
    for end, n in ends.most_common(15):
        print(n, end)
    return rows, procs


def _spy(rate: int, out: Path, cmd: list[str] | None = None, pid: int | None = None) -> list[str]:
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    what = ["--pid", str(pid)] if pid is not None else ["--", *(cmd or [])]
    return [spy, "record", "-r", str(rate), "--subprocesses", "-f", "raw", "-o", str(out), *what]


def profile_check(store, rate: int, out: Path) -> float:
    drop_findings_cache(store)
    settle(store)  # every file in the page cache, as the read+parse floor finds them
    t0 = time.perf_counter()
    subprocess.run(_spy(rate, out, [sys.executable, "-m", "kin_memory", "check"]), cwd=store.alpha,
                   env=server_env(store), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # fmt: skip
    return time.perf_counter() - t0


def profile_start(store, rate: int, out: Path) -> float:
    """The cold start (no findings cache, no recall index) up to the "checked in" log line."""
    drop_findings_cache(store)
    shutil.rmtree(store.root / ".kin-index", ignore_errors=True)
    settle(store)
    # py-spy attaches to the running server (a server started by py-spy hears nothing on its stdin).
    client = LspClient([sys.executable, "-m", "kin_memory", "serve"], server_env(store), cwd=store.alpha)
    t0 = time.perf_counter()
    spy = subprocess.Popen(_spy(rate, out, pid=client.proc.pid), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        client.request("initialize", initialize_params(store.alpha))
        client.wait(lambda m: m.get("id") == 1, 0, 600)
        client.notify("initialized", {})
        client.wait(
            lambda m: (
                m.get("method") == "window/logMessage" and "checked in" in m["params"].get("message", "")
            ),
            0,
            600,
        )
        took = time.perf_counter() - t0
    finally:
        client.close()  # shutdown, exit: py-spy writes its samples once the server is gone
        spy.wait(60)
    return took


def table(rows: Counter[str]) -> str:
    total = sum(rows.values()) or 1
    lines = ["| where | samples | share |", "|---|---|---|"]
    for row, n in rows.most_common():
        lines.append(f"| {row} | {n} | {100 * n / total:.1f} % |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", default="10k")
    ap.add_argument("--what", default="check,start")
    ap.add_argument("--rate", type=int, default=250, help="samples per second per process")
    ap.add_argument("--keep", default="", help="a folder where py-spy's raw samples are kept")
    ap.add_argument("--show", default="", help="print the commonest stacks of the row starting so")
    args = ap.parse_args(argv)
    store = generate(parse_size(args.size))
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    for what in args.what.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(args.keep or tmp) / f"{what}-{args.size}.txt"
            took = (profile_check if what == "check" else profile_start)(store, args.rate, out)
            rows, procs = parse_raw(out, args.show)
        cpu = ", ".join(f"{n / args.rate:.2f}" for _, n in procs.most_common())
        print(
            f"\n## {what} at {args.size}: {took:.2f} s under the profiler; sampled seconds by process: {cpu}\n"
        )
        print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
