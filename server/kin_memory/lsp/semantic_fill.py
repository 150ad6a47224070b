"""The semantic layer filled in the background: after the lexical index, one memory at a time.

Runs on the index writer's lane, in slices of about FILL_SLICE seconds: each memory waits for running
queries first (RecallSync.yield_to_queries), a change waiting to be indexed ends the slice (it is indexed
first, and the fill goes on after it), and the lane's other work (index writes, seals) comes in between
slices. Diagnostics never wait for it: they do not use the index's writer. Progress goes to the editor as
`$/progress` (both editors show it), and the log says when the layer is complete.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..wording import counted
from .heap import release_freed

if TYPE_CHECKING:
    from ..recall.service import Recall
    from .progress import Progress, Task
    from .scheduler import Lane

log = logging.getLogger("kin_memory.lsp")
FILL_SLICE = 2.0  # seconds of embedding per turn on the writer's lane
REPORT_EVERY = 1.0  # seconds between progress reports


class SemanticFill:
    def __init__(
        self,
        writer: Lane,
        recall: Callable[[], Recall],
        yield_to_queries: Callable[[], None],
        busy: Callable[[], bool],
        say: Callable[[str], None],
        progress: Progress | None = None,
    ) -> None:
        self.writer = writer
        self.recall = recall
        self.yield_to_queries = yield_to_queries
        self.busy = busy  # changes wait to be indexed: they go first
        self.say = say
        self.progress = progress
        self.loop: asyncio.AbstractEventLoop | None = None
        self.running = False  # a slice is queued or running
        self._task: Task | None = None
        self._started = 0.0
        self._filled = 0
        self._reported = 0.0

    def kick(self) -> None:
        """From the writer, once the lexical index is current: fill what lacks a vector, if anything."""
        if self.running:
            return
        layer = self.recall().semantic()
        if layer is None or layer.problem is not None:
            return
        if not layer.vectors.missing():
            layer.state()  # counted: complete
            layer.vectors.refresh()  # read here, in the background, rather than by the first query
            return
        self.running = True
        self._started = time.monotonic()
        self._filled = 0
        self._begin()
        self._slice()

    def _slice(self) -> None:
        layer = self.recall().semantic()
        if layer is None:  # turned off meanwhile
            self._end("semantic recall turned off")
            return
        try:
            remaining = layer.fill(
                before_each=self.yield_to_queries,
                cancelled=self.busy,
                seconds=FILL_SLICE,
                progress=self._progress,
            )
        except Exception as exc:  # noqa: BLE001 - recall by meaning is an aid: words still answer
            log.warning("semantic layer fill failed: %r", exc)
            self._end("semantic recall could not be filled")
            return
        if layer.problem is not None:
            self._end(f"semantic recall is off: {layer.problem}")
            self.say(f"semantic recall is off: {layer.problem}")
            return
        if remaining:
            state = layer.state()
            self._report(state.total - state.missing, state.total)
            self.writer.submit(self._slice)
            return
        layer.vectors.refresh()
        release_freed()  # what the fill's reads and writes freed (the model's activations stay in its arena)
        seconds = time.monotonic() - self._started
        done = (
            f"semantic layer filled: {counted(self._filled, 'memory', 'memories')} embedded in {seconds:.1f}s"
        )
        self._end(done)
        self.say(done)

    def _progress(self, done: int, total: int) -> None:
        self._filled += 1

    # -- the editor's progress -------------------------------------------------------------------
    def _begin(self) -> None:
        if self.progress is None or self.loop is None:
            return
        try:
            future = asyncio.run_coroutine_threadsafe(
                self.progress.begin("semantic", "kin-memory", message="filling the semantic layer"), self.loop
            )
            self._task = future.result(timeout=6.0)
        except Exception as exc:  # noqa: BLE001 - no progress UI is no reason not to fill
            log.info("no progress for the semantic fill: %r", exc)
            self._task = None

    def _report(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self._task is None or now - self._reported < REPORT_EVERY:
            return
        self._reported = now
        percentage = int(100 * done / max(total, 1))
        self._task.report(f"semantic layer: {done} of {total} memories", percentage)

    def _end(self, message: str) -> None:
        self.running = False
        task, self._task = self._task, None
        if task is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(task.end, message)
