"""`kin.memory.sweep {dryRun?}`: delete expired episodic and session memories, `$/progress` on many files.

`dryRun: true` only lists (the editor shows the list and asks before calling again without it); the
thresholds are the editor settings (episodicDays, sessionHours). Cancellable through the progress token.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

from lsprotocol import types as lsp

from .features import external_change
from .server import KinMemoryServer

PROGRESS_MIN = 20  # files; below this a progress bar would only flash


def register(server: KinMemoryServer) -> None:
    from ..tool.sweep import apply_sweep, plan_from

    @server.command("kin.memory.sweep")
    async def sweep(ls: KinMemoryServer, *args: Any) -> dict:
        arg = args[0] if args and isinstance(args[0], dict) else {}
        dry = arg.get("dryRun") is True
        ctx = ls.context()
        loop = asyncio.get_running_loop()

        def plan():
            from ..tool.sweep import disk_memories

            return plan_from(disk_memories(ls.root), ctx.now, ctx.thresholds)

        planned = await loop.run_in_executor(None, plan)
        if dry or not planned.expired:
            return {"swept": [e.vpath for e in planned.expired], "kept": planned.kept}
        token = await _start_progress(ls, len(planned.expired))
        stop = threading.Event()

        def report(done: int, total: int) -> None:
            if token is not None:
                loop.call_soon_threadsafe(
                    ls.work_done_progress.report,
                    token,
                    lsp.WorkDoneProgressReport(message=f"{done}/{total}", percentage=int(done * 100 / total)),
                )

        def cancelled() -> bool:
            fut = ls.work_done_progress.tokens.get(token) if token is not None else None
            return stop.is_set() or bool(fut is not None and fut.cancelled())

        try:
            result = await loop.run_in_executor(
                None,
                lambda: apply_sweep(
                    ls.root, planned, ctx.thresholds, ctx.now, progress=report, cancelled=cancelled
                ),
            )
        except asyncio.CancelledError:  # $/cancelRequest: let the worker stop at the next file
            stop.set()
            raise
        finally:
            if token is not None:
                ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="sweep finished"))
        for vpath in result.swept:
            external_change(ls, ls.root / vpath[len("/memories/") :])
        return result.to_json()


async def _start_progress(ls: KinMemoryServer, count: int) -> str | None:
    caps = getattr(ls, "client_caps", None)
    if count < PROGRESS_MIN or not (caps and caps.window and caps.window.work_done_progress):
        return None
    token = f"kin-memory-sweep-{uuid.uuid4().hex[:8]}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), 5)
    except Exception:  # noqa: BLE001 - no progress UI is fine
        return None
    ls.work_done_progress.begin(
        token,
        lsp.WorkDoneProgressBegin(
            title="kin-memory", message=f"sweeping {count} expired memories", cancellable=True, percentage=0
        ),
    )
    return token
