"""Code lens on a memory's first line: category · visibility · lifecycle, with mark-reviewed when stale.

An editor asks for lenses again when a buffer's text changes, not when the file under it does: Mark
reviewed (the mtime only), a re-stamp or a write from outside change what a lens says while the buffer
stays as it was. So whenever an open memory changes on disk, or the store is reloaded, the server asks
the client to refresh its lenses (`workspace/codeLens/refresh`, when the client says it can), once per
burst of changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...findings.workspace import gone_quiet
from ...store.events import StoreEvent
from ...store.lifecycle import lifecycle
from ...store.workspace import visibility
from ..handlers import handler
from ..session import Session

log = logging.getLogger("kin_memory.lsp")
REFRESH_DELAY = 0.05  # seconds: the writes of one command (a re-stamp of many memories) ask once

QUIET = "quiet (its repository is missing)"  # a memory stamped with a repository gone from here


class CodeLens:
    def __init__(self, session: Session, loop: Callable[[], asyncio.AbstractEventLoop | None]) -> None:
        self.session = session
        self.loop = loop  # the server's event loop, once it runs
        self.server: LanguageServer | None = None
        self._timer: asyncio.TimerHandle | None = None
        session.events.subscribe(self._on_event)

    def register(self, server: LanguageServer) -> None:
        self.server = server
        server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)(handler(self.lenses))

    def lenses(self, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        uri = params.text_document.uri
        vpath = self.session.vpath_of(uri)
        memory = self.session.store.get(vpath) if vpath else None
        if memory is None or memory.is_index:
            return []
        ctx = self.session.context()
        life = lifecycle(memory.category, memory.mtime, ctx.now, ctx.thresholds)
        vis = visibility(memory.stamp, ctx.active)
        rng = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
        scope = vis.scope
        if gone_quiet(memory.stamp, ctx):
            scope = QUIET  # the health view's word for the same state
        title = f"{memory.category} · {scope} · {life.label}"
        lenses = [lsp.CodeLens(range=rng, command=lsp.Command(title=title, command=""))]
        if life.status == "stale":
            review = lsp.Command(
                title="Mark reviewed", command="kin.memory.markReviewed", arguments=[{"uri": uri}]
            )
            lenses.append(lsp.CodeLens(range=rng, command=review))
        return lenses

    # -- refresh ----------------------------------------------------------------------------------
    def _on_event(self, event: StoreEvent) -> None:
        """From any thread. A buffer's own edits are not asked for: the editor asks again itself."""
        if event.buffer or not self.session.ready.is_set():
            return
        if event.kind != "reset" and (event.vpath is None or not self.session.store.is_open(event.vpath)):
            return
        self.refresh_soon()

    def refresh_soon(self) -> None:
        """Ask the client to refresh its lenses shortly (thread-safe; one request per burst)."""
        loop = self.loop()
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._arm)

    def _arm(self) -> None:
        loop = self.loop()
        if self._timer is None and loop is not None:
            self._timer = loop.call_later(REFRESH_DELAY, self._send)

    def _send(self) -> None:
        self._timer = None
        server = self.server
        if server is None or not _can_refresh(server):
            return
        try:
            server.workspace_code_lens_refresh(None)
        except Exception as exc:  # noqa: BLE001 - a lens that stays as it was is no reason to fail
            log.debug("code lens refresh not sent: %r", exc)


def _can_refresh(server: LanguageServer) -> bool:
    try:
        caps = server.client_capabilities
    except Exception:  # noqa: BLE001 - before initialize there are none
        return False
    workspace = caps.workspace if caps is not None else None
    lens = workspace.code_lens if workspace is not None else None
    return bool(lens is not None and lens.refresh_support)
