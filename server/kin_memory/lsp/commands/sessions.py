"""`kin.memory.latestSession`: the newest Claude Code or Codex session of the active workspace, which the
editors' reflect command offers first (as `kin-memory reflect --latest` takes it), with its date, size and
first prompt so the person knows which session it is. Reads the disk, off the event loop; the rule of
where sessions live and which is newest is reflect/sessions.py's."""

from __future__ import annotations

import os

from pygls.lsp.server import LanguageServer

from ... import protocol
from ...reflect import sessions
from ..scheduler import Scheduler
from ..session import Session
from .base import Handler


class SessionCommands:
    def __init__(self, session: Session, scheduler: Scheduler) -> None:
        self.session = session
        self.scheduler = scheduler

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {"kin.memory.latestSession": self.latest}

    async def latest(self, _params: protocol.EmptyParams) -> protocol.LatestSessionResult:
        workspaces = [w for w in self.session.active() if w.startswith("/")]
        return await self.scheduler.run(_latest, workspaces)


def _latest(workspaces: list[str]) -> protocol.LatestSessionResult:
    searched: list[str] = []
    found: list[sessions.Session] = []
    for workspace in workspaces:
        searched += [str(p) for p in sessions.where(workspace)]
        newest = sessions.latest_session(workspace)
        if newest is not None:
            found.append(newest)
    if not found:
        return protocol.LatestSessionResult(path=None, agent=None, searched=searched)
    best = max(found, key=lambda s: s.mtime)
    try:
        size: int | None = os.lstat(best.path).st_size
    except OSError:
        size = None
    return protocol.LatestSessionResult(
        path=str(best.path),
        agent=best.agent,
        searched=searched,
        modified=best.mtime,
        size=size,
        first_prompt=sessions.first_prompt(best.path),
    )
