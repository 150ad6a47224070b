"""Work done once things have been quiet for a while: each poke pushes the moment back, and the work runs
on a thread of its own when the moment comes with no poke since. Used for what follows the store's
changes without needing to follow each one (the kept listing, the sync conflicts' diagnostics)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .scheduler import Scheduler


class WhenQuiet:
    def __init__(self, scheduler: Scheduler, name: str, work: Callable[[], None]) -> None:
        self.scheduler = scheduler
        self.name = name
        self.work = work
        self.due: float | None = None  # when to run (monotonic), pushed back by each poke
        self.wake = threading.Event()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def poke(self, delay: float) -> None:
        """Run the work `delay` seconds from now, unless poked again meanwhile."""
        with self.lock:
            self.due = time.monotonic() + delay
            if self.thread is None:
                self.thread = self.scheduler.spawn(self.name, self._run)
        self.wake.set()

    def take_due(self) -> bool:
        """Whether work was due (it is no longer: the caller does it now)."""
        with self.lock:
            due, self.due = self.due, None
        return due is not None

    def _run(self) -> None:
        while True:
            self.wake.wait()
            self.wake.clear()
            while True:
                with self.lock:
                    due = self.due
                if due is None:
                    break
                if (left := due - time.monotonic()) > 0:
                    time.sleep(left)
                    continue
                with self.lock:
                    if self.due != due:  # poked meanwhile: wait for quiet again
                        continue
                    self.due = None
                self.work()
