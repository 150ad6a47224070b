"""`kin.memory.sweep {dryRun?}`: delete expired episodic and session memories, `$/progress` on many files.

`dryRun: true` only lists (the editor shows the list and asks before calling again without it); the
thresholds are the editor settings (episodicDays, sessionHours). Cancellable through the progress token.
"""

from __future__ import annotations

import asyncio
import threading

from pygls.lsp.server import LanguageServer

from ... import protocol
from ...tool.sweep import apply_sweep, disk_memories, plan_from
from ..features.documents import Documents
from ..progress import Progress
from ..session import Session
from .base import register_command

PROGRESS_MIN = 20  # files; below this a progress bar would only flash


class SweepCommand:
    def __init__(self, session: Session, documents: Documents, progress: Progress) -> None:
        self.session = session
        self.documents = documents
        self.progress = progress

    def register(self, server: LanguageServer) -> None:
        register_command(server, "kin.memory.sweep", self.sweep)

    async def sweep(self, params: protocol.SweepParams) -> protocol.SweepResult:
        ctx = self.session.context()
        root = self.session.root
        loop = asyncio.get_running_loop()
        planned = await loop.run_in_executor(
            None, lambda: plan_from(disk_memories(root), ctx.now, ctx.thresholds)
        )
        if params.dry_run or not planned.expired:
            return protocol.SweepResult(swept=[e.vpath for e in planned.expired], kept=planned.kept)
        count = len(planned.expired)
        task = await self.progress.begin("sweep", "kin-memory", cancellable=True, message=f"sweeping {count} expired memories") \
            if count >= PROGRESS_MIN else None  # fmt: skip
        stop = threading.Event()

        def report(done: int, total: int) -> None:
            if task is not None:
                task.report(f"{done}/{total}", int(done * 100 / total))

        def cancelled() -> bool:
            return stop.is_set() or (task is not None and task.cancelled())

        try:
            result = await loop.run_in_executor(None, lambda: apply_sweep(
                root, planned, ctx.thresholds, ctx.now, progress=report, cancelled=cancelled))  # fmt: skip
        except asyncio.CancelledError:  # $/cancelRequest: let the worker stop at the next file
            stop.set()
            raise
        finally:
            if task is not None:
                task.end("sweep finished")
        for vpath in result.swept:
            self.documents.external_change(self.session.path_of(vpath))
        return protocol.SweepResult(swept=list(result.swept), kept=result.kept)
