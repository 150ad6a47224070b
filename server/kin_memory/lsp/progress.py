"""`$/progress` for long commands, when the client offers it; a no-op otherwise.

Reports may come from worker threads: they are handed to the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from .session import Session

log = logging.getLogger("kin_memory.lsp")
CREATE_TIMEOUT = 5.0  # seconds the client gets to accept a progress token


class Task:
    def __init__(self, server: LanguageServer | None, token: str, loop: asyncio.AbstractEventLoop) -> None:
        self.server = server  # None: no progress UI
        self.token = token
        self.loop = loop

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.server is not None:
            report = lsp.WorkDoneProgressReport(message=message, percentage=percentage)
            self.loop.call_soon_threadsafe(self.server.work_done_progress.report, self.token, report)

    def cancelled(self) -> bool:
        if self.server is None:
            return False
        future = self.server.work_done_progress.tokens.get(self.token)
        return bool(future is not None and future.cancelled())

    def end(self, message: str) -> None:
        if self.server is not None:
            self.server.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))


class Progress:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.server: LanguageServer | None = None

    def bind(self, server: LanguageServer) -> None:
        self.server = server

    async def begin(
        self, kind: str, title: str, *, cancellable: bool = False, message: str | None = None
    ) -> Task:
        """`kind` names the token (kin-memory-<kind>-…), so a client or test can tell tasks apart."""
        loop = asyncio.get_running_loop()
        token = f"kin-memory-{kind}-{uuid.uuid4().hex[:12]}"
        server = self.server
        if server is None or not self.session.has_capability("window", "work_done_progress"):
            return Task(None, token, loop)
        try:
            await asyncio.wait_for(server.work_done_progress.create_async(token), CREATE_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - no progress UI is no reason to fail the command
            log.info("no progress for %s: %r", title, exc)
            return Task(None, token, loop)
        begin = lsp.WorkDoneProgressBegin(title=title, cancellable=cancellable, message=message,
                                          percentage=0 if cancellable else None)  # fmt: skip
        server.work_done_progress.begin(token, begin)
        return Task(server, token, loop)
