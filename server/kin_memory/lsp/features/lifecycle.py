"""The session's lifecycle: initialize, the client's settings, the first whole-store check.

Invalid settings are replaced by their defaults and reported once per change, in the editor's own
setting names. After the first check the watcher's held changes are applied and recall starts syncing.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...wording import counted
from ..handlers import handler
from ..heap import release_freed
from ..progress import Progress
from ..recall_sync import RecallSync
from ..session import Session, uri_to_path
from ..startup.front import Handover
from ..startup.strategy import Startup
from .diagnostics import Diagnostics
from .documents import Documents

log = logging.getLogger("kin_memory.lsp")
CONFIG_TIMEOUT = 5.0  # seconds the client gets to answer workspace/configuration
ARM_WAIT = 5.0  # seconds the catch-up waits for the file watcher to arm (it reports within 0.1 s)
READY_WAIT = 300.0  # seconds a settings change waits for the first check before reading the store again


class Lifecycle:
    def __init__(self, session: Session, documents: Documents, diagnostics: Diagnostics, recall: RecallSync,
                 progress: Progress, startup: Startup, front: Handover | None = None) -> None:  # fmt: skip
        self.session = session
        self.documents = documents
        self.diagnostics = diagnostics
        self.recall = recall
        self.progress = progress
        self.startup = startup
        self.front = front  # what the start-up front already did (answered, settings pulled)
        self.server: LanguageServer | None = None
        self._reported: set[str] = set()
        self._logged_problems: set[tuple[str, str]] = set()

    def register(self, server: LanguageServer) -> None:
        self.server = server
        server.feature(lsp.INITIALIZE)(handler(self.initialize))
        server.feature(lsp.INITIALIZED)(handler(self.initialized))
        server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)(handler(self.did_change_configuration))

    def initialize(self, params: lsp.InitializeParams) -> None:
        session = self.session
        session.capabilities = params.capabilities
        if self.front is not None and self.front.answered:
            # The front already took folders, client, encoding and settings from these same params (the
            # settings again here could move the store under the check it started).
            return
        folders = [f.uri for f in (params.workspace_folders or [])]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        session.folders = [str(p) for p in (uri_to_path(u) for u in folders) if p]
        session.client_name = params.client_info.name if params.client_info else ""
        assert self.server is not None
        kind = self.server.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        session.encoding = getattr(kind, "value", str(kind))
        self.apply_settings(params.initialization_options or {})

    async def initialized(self, _params: lsp.InitializedParams) -> None:
        front = self.front
        if front is not None and front.answered:
            self.apply_settings(front.settings)  # what the front applied, reported in the editor's terms
        if front is None or not front.pulled:
            await self.pull_settings()
        await self.first_check()

    async def did_change_configuration(self, params: lsp.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and params.settings:
            self.apply_settings(params.settings)
        else:  # VS Code may send `settings: null`: treat it as "pull again"
            await self.pull_settings()
        await asyncio.get_running_loop().run_in_executor(None, self._reload_when_ready)
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
        request = lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="kinMemory")])
        try:
            result = await asyncio.wait_for(
                self.server.workspace_configuration_async(request), CONFIG_TIMEOUT
            )
        except Exception as exc:  # noqa: BLE001 - a client without settings is fine
            log.info("workspace/configuration failed: %s", exc)
            return
        if result and isinstance(result[0], dict):
            self.apply_settings(result[0])

    def apply_settings(self, raw: object) -> None:
        problems = self.session.apply_settings(raw)
        messages = {p.message(self.session.setting_label) for p in problems}
        for message in sorted(messages - self._reported):  # once per change, not on every pull
            self._show(lsp.MessageType.Warning, message)
        self._reported = messages

    async def first_check(self) -> None:
        loop = asyncio.get_running_loop()
        # The editor's answer to creating the progress token is not waited for: the check starts at once.
        progress = asyncio.ensure_future(
            self.progress.begin("startup", "kin-memory", message="loading the store")
        )
        started = time.perf_counter()
        # Either watch from the start (changes seen while the store loads are held and applied once it
        # is loaded: applied earlier, the load's snapshot could overwrite them), or after the check, which
        # the strategy's `settle` then compares with the disk.
        watch_first = self.startup.watch_during_check
        if watch_first:
            self.documents.start_watcher(loop)
        self.diagnostics.start(loop)
        count, how = await self.startup.first_check(self.session, self.diagnostics)
        if not watch_first:
            self.documents.start_watcher(loop)
        if how is not None:  # None: logged where it was done
            self._log(f"kin-memory: {count} memories in {self.session.root} checked in "
                      f"{time.perf_counter() - started:.2f}s{how}")  # fmt: skip
        self.log_scan_problems()
        # What the startup load built lives as long as the server: taken out of the collector's view,
        # later collections no longer walk 100k memories in the middle of a keystroke.
        gc.collect()
        gc.freeze()
        release_freed()
        self.session.ready.set()
        self.documents.release_held()
        self.recall.start(loop)
        self.diagnostics.refresh_settings()
        await loop.run_in_executor(None, self._settle)
        await loop.run_in_executor(None, release_freed)  # the catch-up's scan of every file, freed
        (await progress).end(f"{counted(count, 'memory', 'memories')} checked")

    def _settle(self) -> None:
        """The strategy's catch-up, once the watcher sees changes: nothing falls between the two."""
        self.documents.armed.wait(ARM_WAIT)
        self.startup.settle(self.session)

    def log_scan_problems(self) -> None:
        """Entries the scan skipped (a folder named x.md, a symlink out of the store) have no document to
        carry a diagnostic: each gets a logged reason, once."""
        for problem in self.session.store.scan_problems():
            if (problem.vpath, problem.reason) not in self._logged_problems:
                self._logged_problems.add((problem.vpath, problem.reason))
                self._log(f"kin-memory: {problem.vpath}: {problem.reason}", lsp.MessageType.Warning)

    def _log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        if self.server is not None:
            self.server.window_log_message(lsp.LogMessageParams(type=kind, message=message))

    def _show(self, kind: lsp.MessageType, message: str) -> None:
        if self.server is not None:
            self.server.window_show_message(lsp.ShowMessageParams(type=kind, message=message))
