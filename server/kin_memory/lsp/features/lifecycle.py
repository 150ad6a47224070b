"""The session's lifecycle: initialize, the client's settings, then the start-up.

Invalid settings are replaced by their defaults and reported once per change, in the editor's own
setting names. Reading `initialize` is the session's (`Session.take_initialize`), whoever answered it;
the start-up itself (the first whole-store check) is handed in by the server as `start`: this feature
knows nothing of how it is done.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pygls.lsp.server import LanguageServer

from ...store.workspace_aliases import record_if_synced
from ..handlers import handler
from ..scheduler import Scheduler
from ..session import CONFIG_TIMEOUT, SETTINGS_SECTION, Session, settings_of
from .diagnostics import Diagnostics

log = logging.getLogger("kin_memory.lsp")
READY_WAIT = 300.0  # seconds a settings change waits for the first check before reading the store again


class Answered(Protocol):
    """What answered `initialize` before the LSP stack was serving, if anything did."""

    answered: bool  # `initialize` answered, its params taken by the session
    settings: object  # the settings applied then (pulled, else the initialization options)
    pulled: bool  # the client was asked for its settings and answered


class Lifecycle:
    def __init__(self, session: Session, scheduler: Scheduler, diagnostics: Diagnostics,
                 start: Callable[[], Awaitable[None]], early: Answered | None = None) -> None:  # fmt: skip
        self.session = session
        self.scheduler = scheduler
        self.diagnostics = diagnostics
        self.start = start  # the start-up, once initialized and the settings are in
        self.early = early
        self.server: LanguageServer | None = None
        self._reported: set[str] = set()

    def register(self, server: LanguageServer) -> None:
        self.server = server
        server.feature(lsp.INITIALIZE)(handler(self.initialize))
        server.feature(lsp.INITIALIZED)(handler(self.initialized))
        server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)(handler(self.did_change_configuration))

    def initialize(self, params: lsp.InitializeParams) -> None:
        session = self.session
        session.capabilities = params.capabilities
        if self.early is not None and self.early.answered:
            # Taken already from these same params (the settings again here could move the store under
            # the check the front started).
            return
        assert self.server is not None
        kind = self.server.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        raw = get_converter().unstructure(params, lsp.InitializeParams)
        self.apply_settings(session.take_initialize(raw, getattr(kind, "value", str(kind))))

    async def initialized(self, _params: lsp.InitializedParams) -> None:
        early = self.early
        if early is not None and early.answered:
            self.apply_settings(early.settings)  # what the front applied, reported in the editor's terms
        if early is None or not early.pulled:
            await self.pull_settings()
        await self.start()
        # Which realpath is which repository here, for the machines this store syncs with (a store
        # that is not synced asks git nothing).
        self.scheduler.submit(record_if_synced, self.session.root, self.session.active())

    async def did_change_configuration(self, params: lsp.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and params.settings:
            self.apply_settings(params.settings)
        else:  # VS Code may send `settings: null`: treat it as "pull again"
            await self.pull_settings()
        await self.scheduler.run(self._reload_when_ready)
        self.diagnostics.refresh_settings()

    def _reload_when_ready(self) -> None:
        """The store read again with the new settings, once the first check is done: before that, its
        load (or the start-up front's) and the catch-up after it stand for the disk, and a file this read
        took in would be in the store with no diagnostic ever published (nobody publishes until then)."""
        self.session.ready.wait(READY_WAIT)
        self.session.store.load_all()

    async def pull_settings(self) -> None:
        if not self.session.has_capability("workspace", "configuration") or self.server is None:
            return
        request = lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SETTINGS_SECTION)])
        try:
            result = await asyncio.wait_for(
                self.server.workspace_configuration_async(request), CONFIG_TIMEOUT
            )
        except Exception as exc:  # noqa: BLE001 - a client without settings is fine
            log.info("workspace/configuration failed: %s", exc)
            return
        if result and isinstance(result[0], dict):
            self.apply_settings(settings_of(result))

    def apply_settings(self, raw: object) -> None:
        problems = self.session.apply_settings(raw)
        messages = {p.message(self.session.setting_label) for p in problems}
        for message in sorted(messages - self._reported):  # once per change, not on every pull
            if self.server is not None:
                params = lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=message)
                self.server.window_show_message(params)
        self._reported = messages
