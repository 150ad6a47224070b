"""One scheduler owns the language server's threads (lsp/scheduler.py): serial lanes keep their order,
the query pool is never starved by background work, spawned loops are named daemons, a stopped
scheduler drops new work quietly; and no module of the server starts a thread or a pool of its own."""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path

from kin_memory.lsp.scheduler import Scheduler

LSP = Path(__file__).resolve().parents[3] / "server" / "kin_memory" / "lsp"
# The worker processes' own channel threads are the shards package's (started before any server exists).
NOT_THE_SERVERS = ("startup/shards",)


def test_a_lane_runs_its_jobs_one_at_a_time_in_order() -> None:
    scheduler = Scheduler()
    seen: list[int] = []
    running = 0
    most = 0
    lock = threading.Lock()

    def job(n: int) -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        seen.append(n)
        with lock:
            running -= 1

    lane = scheduler.lane("index")
    assert scheduler.lane("index") is lane  # one lane per name
    for n in range(200):
        lane.submit(job, n)
    scheduler.shutdown(wait=True)
    assert seen == list(range(200)) and most == 1


def test_a_full_background_pool_does_not_hold_up_a_query() -> None:
    scheduler = Scheduler(background=2, queries=1)
    release = threading.Event()
    for _ in range(4):  # more blocked jobs than background threads
        scheduler.submit(release.wait, 30)

    async def ask() -> str:
        return await asyncio.wait_for(scheduler.query(lambda: threading.current_thread().name), 10)

    try:
        name = asyncio.run(ask())
    finally:
        release.set()
        scheduler.shutdown(wait=True)
    assert name.startswith("kin-memory-query")


def test_spawned_loops_are_named_daemons_and_a_stopped_scheduler_drops_new_work() -> None:
    scheduler = Scheduler()
    done = threading.Event()
    thread = scheduler.spawn("watch", done.set)
    thread.join(10)
    assert done.is_set() and thread.daemon and thread.name == "kin-memory-watch"
    scheduler.shutdown()
    assert scheduler.submit(print) is None  # no exception in the thread that submitted
    assert scheduler.lane("history").submit(print) is None


def _starts_threads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in ("Thread", "ThreadPoolExecutor"):
            found.append(f"{name} at line {node.lineno}")
        elif name == "run_in_executor" and node.args and isinstance(node.args[0], ast.Constant):
            found.append(f"run_in_executor(None) at line {node.lineno}")
    return found


def test_no_module_of_the_server_starts_a_thread_of_its_own() -> None:
    offenders = {}
    for path in LSP.rglob("*.py"):
        rel = path.relative_to(LSP).as_posix()
        if rel == "scheduler.py" or rel.startswith(NOT_THE_SERVERS):
            continue
        found = _starts_threads(path)
        if found:
            offenders[rel] = found
    assert offenders == {}


def test_the_lifecycle_feature_knows_nothing_of_the_start_up() -> None:
    tree = ast.parse((LSP / "features" / "lifecycle.py").read_text())
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any("startup" in m for m in imported)
