"""Every thread of the language server, owned in one place.

The event loop is the main lane: it reads messages, orders them and writes answers, and never blocks.
Everything else runs here:

- the background pool (bounded): blocking work a handler awaits (a store load, a proposal, a wait for
  the first check) and jobs nobody awaits (remembering the initialize answer);
- the query pool: what the user waits for at the keyboard (hover, search, symbols), kept apart so
  that background work never takes its threads;
- serial lanes by name (the recall index writer, history): one thread each, jobs run in the order
  they were submitted, so a lane needs no lock of its own for its ordering;
- `spawn` for the few loops that live as long as the server (the reader, the file watcher, the
  settings poll).

A new background job is one call here. `shutdown` stops every pool and lane at once; work submitted
after that (a store event arriving while the server stops) is dropped quietly.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, TypeVar

log = logging.getLogger("kin_memory.lsp")
T = TypeVar("T")

PREFIX = "kin-memory"
QUERY_THREADS = 2
# As many as Python's own default pool: a few handlers park a thread waiting for the first check.
BACKGROUND_THREADS = min(32, (os.cpu_count() or 1) + 4)


class Lane:
    """One thread, jobs in submission order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{PREFIX}-{name}")

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T] | None:
        """The job queued behind the others; None once the server is stopping (nothing would run it)."""
        return _submit(self._executor, fn, *args)

    def run(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """`fn(*args)` queued on this lane, awaited on the running event loop."""
        return asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def shutdown(self, wait: bool = False) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=not wait)


class Scheduler:
    def __init__(self, background: int = BACKGROUND_THREADS, queries: int = QUERY_THREADS) -> None:
        self.background = ThreadPoolExecutor(max_workers=background, thread_name_prefix=f"{PREFIX}-worker")
        self.queries = ThreadPoolExecutor(max_workers=queries, thread_name_prefix=f"{PREFIX}-query")
        self._lanes: dict[str, Lane] = {}
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._stopped = False

    # -- from the event loop: awaitable ---------------------------------------------------------
    def run(
        self, fn: Callable[..., T], *args: Any, loop: asyncio.AbstractEventLoop | None = None
    ) -> asyncio.Future[T]:
        """`fn(*args)` on the background pool, awaited on the event loop (`loop`: the running one)."""
        return (loop or asyncio.get_running_loop()).run_in_executor(self.background, fn, *args)

    def query(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """`fn(*args)` on the query pool: a hover, a search, a symbol lookup the user waits for."""
        return asyncio.get_running_loop().run_in_executor(self.queries, fn, *args)

    # -- from any thread --------------------------------------------------------------------------
    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T] | None:
        """`fn(*args)` on the background pool, from any thread; None once the server is stopping."""
        return _submit(self.background, fn, *args)

    def lane(self, name: str) -> Lane:
        """The serial lane of this name (made on first use)."""
        with self._lock:
            lane = self._lanes.get(name)
            if lane is None:
                lane = self._lanes[name] = Lane(name)
                if self._stopped:  # made while stopping: takes nothing either
                    lane.shutdown()
            return lane

    def spawn(self, name: str, fn: Callable[..., object], *args: Any) -> threading.Thread:
        """A loop that lives as long as the server, on a daemon thread of its own (it never holds the
        process open once the client has gone)."""
        thread = threading.Thread(target=fn, args=args, name=f"{PREFIX}-{name}", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        return thread

    def shutdown(self, wait: bool = False) -> None:
        """Stop every pool and lane: queued jobs are dropped (with `wait`, run first and waited for);
        running ones finish on their own. The spawned loops end with the process."""
        with self._lock:
            self._stopped = True
            lanes = list(self._lanes.values())
        for lane in lanes:
            lane.shutdown(wait)
        for pool in (self.queries, self.background):
            pool.shutdown(wait=wait, cancel_futures=not wait)


def _submit(executor: Executor, fn: Callable[..., T], *args: Any) -> Future[T] | None:
    try:
        return executor.submit(fn, *args)
    except RuntimeError:  # shut down (the server or the interpreter is stopping)
        log.debug("dropped a job submitted while stopping: %s", getattr(fn, "__name__", fn))
        return None
