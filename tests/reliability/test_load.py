"""Load on the real server: a burst of 5,000 didChange notifications across 50 open files while hover
requests keep flowing, then 20 concurrent memory-tool writers (over LSP and the CLI) and an external
writer on the same files, with every update accounted for.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from pathlib import Path

from reliability_support import COUNTS, assert_matches_check, frame, rss_kb, tool_cli, write

FILES = 50
CHANGES = 5000


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[int(0.95 * (len(ordered) - 1))]


def _text(i: int, n: int) -> str:
    # every few versions a typo in the category, so the diagnostics keep changing through the burst
    category = "prefrence" if (i + n) % 3 == 0 else "preference"
    words = " ".join(
        f"t{i}w{k}" for k in range(n % 40)
    )  # each file its own words: no near-duplicates (KM601)
    return f"---\ncategory: {category}\n---\n# File {i}\n\nversion {n} {words}\n"


def test_did_change_burst_with_hovers(root: Path, home: Path, server_factory) -> None:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)  # the measuring client's threads hand over promptly
    try:
        _burst(root, home, server_factory)
    finally:
        sys.setswitchinterval(previous)


def _burst(root: Path, home: Path, server_factory) -> None:
    paths = [write(root / f"g{i % 5}" / f"f{i}.md", _text(i, 0)) for i in range(FILES)]
    server = server_factory()
    server.initialize()
    uris = [server.open(p, _text(i, 0)) for i, p in enumerate(paths)]

    def timed_hover(k: int) -> float:
        started = time.perf_counter()
        response = server.hover(uris[k % FILES], 1, 3, timeout=30)
        assert response.get("result") and "category" in response["result"]["contents"]["value"], response
        return time.perf_counter() - started

    for k in range(20):  # warm up
        timed_hover(k)
    idle = [timed_hover(k) for k in range(100)]
    rss_before = rss_kb(server.pid)
    during: list[float] = []
    done = threading.Event()

    def hovers() -> None:
        k = 0
        while not done.is_set():
            during.append(timed_hover(k))
            k += 1

    # Framed up front and written in chunks: the test client's own Python work would otherwise compete
    # with its hover thread for the GIL and be measured as server latency.
    versions = [1] * FILES
    chunks, chunk = [], []
    for n in range(CHANGES):
        i = (n * 7) % FILES
        versions[i] += 1
        chunk.append(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uris[i], "version": versions[i]},
                        "contentChanges": [{"text": _text(i, versions[i])}],
                    },
                }
            )
        )
        if len(chunk) == 50:
            chunks.append(b"".join(chunk))
            chunk = []
    chunks.append(b"".join(chunk))
    thread = threading.Thread(target=hovers)
    thread.start()
    for data in chunks:
        server.send_raw(data)
        time.sleep(0.01)  # an editor's pace is bursty, not one write of 5,000 frames
    # the burst is over once the last version of every file is published
    server.wait_until(
        lambda: all(server.diag_versions.get(u) == v for u, v in zip(uris, versions, strict=True)),
        60,
        "the final versions' diagnostics",
    )
    done.set()
    thread.join(30)
    COUNTS["requests under load (didChange)"] += CHANGES
    COUNTS["requests under load (hover)"] += len(during) + len(idle)
    idle_p95, burst_p95 = _p95(idle), _p95(during)
    print(
        f"hover p95 idle {idle_p95 * 1000:.2f} ms, during the burst {burst_p95 * 1000:.2f} ms "
        f"(p50 {sorted(during)[len(during) // 2] * 1000:.2f}, {len(during)} hovers); RSS {rss_before} -> {rss_kb(server.pid)} KB; {server.diag_count} publishes"
    )
    assert len(during) >= 10, len(during)  # hovers are answered during the burst, not after it
    # Their speed is the bench's to judge (a budget there, on a quiet machine), not this test's.
    COUNTS["hover p95 idle (us)"] = int(idle_p95 * 1e6)
    COUNTS["hover p95 during the burst (us)"] = int(burst_p95 * 1e6)
    assert rss_kb(server.pid) - rss_before < 150 * 1024
    # the final buffers saved as they are: a from-scratch check must say exactly what the server said
    for i, path in enumerate(paths):
        write(path, _text(i, versions[i]))
    assert assert_matches_check(server, root, home) > 0
    assert server.shutdown() == 0
    server.assert_clean_stderr()


SLOTS = 20
ROUNDS = 6


def test_concurrent_tool_writers_lose_nothing(root: Path, home: Path, server_factory) -> None:
    """20 writers, each bumping its own counter line with str_replace (10 over LSP, 10 through the CLI),
    and an external process appending lines in place. Each str_replace is applied or reported; the
    final file holds exactly the applied bumps; external lines clobbered by a racing rename are counted."""
    target = write(
        root / "shared" / "counters.md",
        "---\ncategory: preference\n---\n" + "".join(f"slot-{i}: 0\n" for i in range(SLOTS)),
    )
    server = server_factory()
    server.initialize()
    applied = [0] * SLOTS
    outcomes: dict[str, int] = {}
    lock = threading.Lock()

    def bump(slot: int) -> None:
        for _ in range(ROUNDS):
            for _attempt in range(80):  # a conflict is retried, as an agent would
                old, new = f"slot-{slot}: {applied[slot]}\n", f"slot-{slot}: {applied[slot] + 1}\n"
                call = {
                    "command": "str_replace",
                    "path": "/memories/shared/counters.md",
                    "old_str": old,
                    "new_str": new,
                }
                if slot % 2:
                    result = server.tool(call, timeout=60)
                    text, error = result["content"], result["isError"]
                else:
                    out = tool_cli(root, home, call, timeout=60)
                    assert "Traceback" not in out.stderr, out.stderr
                    text, error = out.stdout, out.returncode != 0
                kind = (
                    "applied"
                    if not error
                    else (
                        "conflict"
                        if "changed while" in text
                        else "not found"
                        if "did not appear" in text
                        else text
                    )
                )
                with lock:
                    outcomes[kind] = outcomes.get(kind, 0) + 1
                if not error:
                    applied[slot] += 1
                    break
                assert kind in ("conflict", "not found"), kind  # nothing else is an acceptable answer

    stop = threading.Event()
    appended: list[int] = []

    def external() -> None:
        n = 0
        while not stop.is_set():
            fd = os.open(target, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, f"external {n}\n".encode())
            finally:
                os.close(fd)
            appended.append(n)
            n += 1
            time.sleep(0.01)

    writer = threading.Thread(target=external)
    writer.start()
    threads = [threading.Thread(target=bump, args=(s,)) for s in range(SLOTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    stop.set()
    writer.join(10)
    final = target.read_text(encoding="utf-8")
    for slot in range(SLOTS):
        assert re.search(rf"^slot-{slot}: {applied[slot]}$", final, re.M), (slot, applied[slot], final[:2000])
    assert sum(applied) == SLOTS * ROUNDS == outcomes["applied"], (applied, outcomes)
    kept = {int(m) for m in re.findall(r"^external (\d+)$", final, re.M)}
    lost = [n for n in appended if n not in kept]
    COUNTS["requests under load (concurrent str_replace)"] += sum(outcomes.values())
    COUNTS["str_replace conflicts reported"] += outcomes.get("conflict", 0) + outcomes.get("not found", 0)
    COUNTS["external appends lost"] += len(lost)
    print(f"str_replace outcomes {outcomes}; external appends {len(appended)}, lost {len(lost)}")
    # Not asserted, measured: an append made in place between the tool's check and its rename is
    # replaced with the rest of the old inode (a rename-based write cannot see it; only writers that
    # take the store's lock are safe). Every str_replace above is accounted for exactly.
    assert len(kept) + len(lost) == len(appended)
    assert_matches_check(server, root, home)
    assert server.shutdown() == 0
    server.assert_clean_stderr()
