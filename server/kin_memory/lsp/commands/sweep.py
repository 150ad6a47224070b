"""`kin.memory.sweep {dryRun?, token?}`: delete expired episodic and session memories, `$/progress` on many files.

Deleting takes two calls: a dry run lists the expired memories and answers with a token naming exactly
that list; the editor shows the list, asks, and calls again with the token. Only then are files deleted,
and only the listed ones, each still expired and unchanged since it was listed (a changed one is kept and
reported in `changed`). Without a token, with a token this server did not issue (or already used), or
after the thresholds changed, nothing is deleted and the answer is a new dry run. The thresholds are the
editor settings (episodicDays, sessionHours). Cancellable through the progress token.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict

from pygls.lsp.server import LanguageServer

from ... import protocol
from ...store.lifecycle import Thresholds
from ...tool.sweep import SweepPlan, apply_sweep, disk_memories, plan_from, plan_token
from ...wording import counted
from ..features.documents import Documents
from ..progress import Progress
from ..scheduler import Scheduler
from ..session import Session
from .base import Handler

PROGRESS_MIN = 20  # files; below this a progress bar would only flash
ISSUED_MAX = 8  # dry runs remembered at once (one per editor window asking is plenty)


class SweepCommand:
    def __init__(
        self, session: Session, scheduler: Scheduler, documents: Documents, progress: Progress
    ) -> None:
        self.session = session
        self.scheduler = scheduler
        self.documents = documents
        self.progress = progress
        # token → (store root, thresholds, plan) of the dry runs answered; a token is used at most once.
        self.issued: OrderedDict[str, tuple[str, Thresholds, SweepPlan]] = OrderedDict()

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {
            "kin.memory.sweep": self.sweep,
        }

    async def sweep(self, params: protocol.SweepParams) -> protocol.SweepResult:
        ctx = self.session.context()
        root = self.session.root
        issued = self.issued.pop(params.token, None) if params.token and not params.dry_run else None
        if issued is None or issued[0] != str(root) or _limits(issued[1]) != _limits(ctx.thresholds):
            return await self.dry_run()
        planned = issued[2]
        if not planned.expired:
            return protocol.SweepResult(swept=[], kept=planned.kept)
        count = len(planned.expired)
        task = await self.progress.begin("sweep", "kin-memory", cancellable=True, message=f"sweeping {counted(count, 'expired memory', 'expired memories')}") \
            if count >= PROGRESS_MIN else None  # fmt: skip
        stop = threading.Event()

        def report(done: int, total: int) -> None:
            if task is not None:
                task.report(f"{done}/{total}", int(done * 100 / total))

        def cancelled() -> bool:
            return stop.is_set() or (task is not None and task.cancelled())

        try:
            result = await self.scheduler.run(lambda: apply_sweep(
                root, planned, ctx.thresholds, ctx.now, progress=report, cancelled=cancelled))  # fmt: skip
        except asyncio.CancelledError:  # $/cancelRequest: let the worker stop at the next file
            stop.set()
            raise
        finally:
            if task is not None:
                task.end("sweep finished")
        for vpath in result.swept:
            self.documents.external_change(self.session.path_of(vpath))
        return protocol.SweepResult(swept=list(result.swept), kept=result.kept, changed=list(result.changed))

    async def dry_run(self) -> protocol.SweepResult:
        """The current list and the token a real sweep must present to delete exactly it."""
        ctx = self.session.context()
        root = self.session.root
        planned = await self.scheduler.run(lambda: plan_from(disk_memories(root), ctx.now, ctx.thresholds))
        token = plan_token(root, planned, ctx.thresholds)
        self.issued.pop(token, None)
        self.issued[token] = (str(root), ctx.thresholds, planned)
        while len(self.issued) > ISSUED_MAX:
            self.issued.popitem(last=False)
        return protocol.SweepResult(swept=[e.vpath for e in planned.expired], kept=planned.kept, token=token)


def _limits(t: Thresholds) -> tuple[float, float]:
    return (t.episodic_days, t.session_hours)
