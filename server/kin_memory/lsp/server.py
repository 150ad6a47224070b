"""The language server: wiring only. Each feature is a unit with its dependencies passed in; the server
object holds no feature state (the session, the publisher and recall are separate units). It owns the
scheduler (every thread: scheduler.py) and the start-up (startup/strategy.py), which it hands to the
Lifecycle feature to run once the client's settings are in."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
from collections.abc import Callable
from typing import Any, Protocol

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pygls.exceptions import FeatureNotificationError
from pygls.lsp.server import LanguageServer

from .. import __version__
from .auto_sync import AutoSync
from .commands import names
from .commands.base import LazyCommands
from .features.actions import CodeActions
from .features.completion import Completion
from .features.diagnostics import Diagnostics
from .features.documents import Documents
from .features.hover import Hover
from .features.lens import CodeLens
from .features.lifecycle import Lifecycle
from .features.renames import Renames
from .features.symbols import Symbols
from .history_sync import HistorySync
from .listing_sync import ListingSync
from .progress import Progress
from .publisher import DiagnosticsPublisher
from .recall_sync import RecallSync
from .scheduler import Scheduler
from .session import Session
from .startup.front import Handover
from .startup.shards import Shards
from .startup.strategy import Startup, Units
from .sync_conflicts import ConflictDiagnostics

log = logging.getLogger("kin_memory.lsp")


class Unit(Protocol):
    def register(self, server: LanguageServer) -> None: ...


class TextChange(Protocol):
    """A didChange as the transport read it: ranges as (line, character, end line, end character), None
    for the whole text."""

    uri: str | None
    version: int | None
    changes: tuple[tuple[tuple[int, int, int, int] | None, str], ...] | None


def _content_change(span: tuple[int, int, int, int] | None, text: str) -> lsp.TextDocumentContentChangeEvent:
    if span is None:
        return lsp.TextDocumentContentChangeWholeDocument(text=text)
    start, end = lsp.Position(line=span[0], character=span[1]), lsp.Position(line=span[2], character=span[3])
    return lsp.TextDocumentContentChangePartial(range=lsp.Range(start=start, end=end), text=text)


class KinMemoryServer(LanguageServer):
    def __init__(self, scheduler: Scheduler | None = None) -> None:
        super().__init__("kin-memory", __version__)
        self.scheduler = scheduler or Scheduler()  # every thread of the server (see scheduler.py)
        self.waiting: Callable[[], int] = lambda: 0  # messages received, not yet dispatched (transport)
        self.on_change: Callable[[str], None] | None = None  # (uri) after a document's text changed

    def apply_change(self, change: TextChange) -> bool:
        """Apply a didChange as pygls's own handler does (the document's new text, then our handler),
        without its generic dispatch; False leaves the message to pygls."""
        uri, version, changes = change.uri, change.version, change.changes
        if uri is None or version is None or changes is None:
            return False
        if self.on_change is None or getattr(self.protocol, "_shutdown", False):
            return False
        try:
            document = lsp.VersionedTextDocumentIdentifier(uri=uri, version=version)
            for span, text in changes:
                self.workspace.update_text_document(document, _content_change(span, text))
            self.on_change(uri)
        except Exception as exc:  # noqa: BLE001 - as pygls reports a notification it could not apply
            self.report_server_error(exc, FeatureNotificationError)
        return True

    def report_server_error(self, error: Exception, source: type) -> None:
        """Out-of-band errors (a notification that could not be applied, e.g. didChange of a document
        never opened) are logged, never popped up: the client caused them and nothing awaits an answer.
        Request errors already travel in their response."""
        if getattr(source, "__name__", "") == "FeatureRequestError":
            return
        log.warning("%s: %r", getattr(source, "__name__", "error"), error)
        message = (
            "kin-memory could not handle a notification from the editor; the server log has the details."
        )
        self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Warning, message=message))

    def send_frames(self, data: bytes) -> None:
        """Write pre-framed messages in one go (on the event loop thread, like pygls's own writes)."""
        writer = self.protocol.writer
        if not data or writer is None:
            return
        res = writer.write(data)
        if inspect.isawaitable(res):
            asyncio.ensure_future(res)


def create_server(root: str | None = None, workspace: str | None = None, shards: Shards | None = None,
                  session: Session | None = None, front: Handover | None = None) -> KinMemoryServer:  # fmt: skip
    """`shards`: the workers forked for the first check (None: it runs in process); `session` and
    `front`: made and started by the start-up front (see startup/front.py), whose scheduler the server
    keeps."""
    server = KinMemoryServer(front.scheduler if front is not None else None)
    scheduler = server.scheduler
    session = session or Session(root, workspace)
    converter = get_converter()
    progress = Progress(session)
    progress.bind(server)
    documents = Documents(session, scheduler, lambda: server.workspace)
    server.on_change = documents.changed
    publisher = DiagnosticsPublisher(
        server.send_frames, resolve=lambda source, uri: diagnostics.resolve(source, uri)
    )
    diagnostics = Diagnostics(session, scheduler, publisher, documents.version, lambda: server.waiting())

    def say(message: str) -> None:  # from the index writer thread
        log.info(message)
        if documents.loop is not None:
            params = lsp.LogMessageParams(type=lsp.MessageType.Info, message=f"kin-memory: {message}")
            documents.loop.call_soon_threadsafe(server.window_log_message, params)

    def log_message(message: str, warning: bool) -> None:  # on the event loop
        kind = lsp.MessageType.Warning if warning else lsp.MessageType.Info
        server.window_log_message(lsp.LogMessageParams(type=kind, message=message))

    recall = RecallSync(session, scheduler, diagnostics.publish_extra, say, lambda: server.waiting(),
                        synced=front.recall_synced if front is not None else None, progress=progress)  # fmt: skip
    history = HistorySync(session, scheduler, recall.yield_to_queries)
    conflicts = ConflictDiagnostics(session, scheduler, diagnostics)

    def show(message: str, warning: bool) -> None:  # from a worker thread: a message the person sees
        kind = lsp.MessageType.Warning if warning else lsp.MessageType.Info
        if documents.loop is not None:
            params = lsp.ShowMessageParams(type=kind, message=message)
            documents.loop.call_soon_threadsafe(server.window_show_message, params)

    auto_sync = AutoSync(session, scheduler, show, conflicts.refresh_soon)
    startup = Startup(Units(session, scheduler, documents, diagnostics, recall, progress, log_message),
                      shards, front)  # fmt: skip
    units: tuple[Unit, ...] = (
        Lifecycle(session, scheduler, diagnostics, startup.run, front),
        documents,
        Hover(session, recall, scheduler),
        Completion(session),
        CodeActions(session, diagnostics, converter, scheduler),
        CodeLens(session, lambda: documents.loop),
        Symbols(session, recall, scheduler, converter),
        *_commands(session, scheduler, recall, history, documents, progress, conflicts),
        Renames(session, documents.version, converter),
        ListingSync(session, scheduler),
        auto_sync,
    )
    for unit in units:
        unit.register(server)
    return server


def _commands(session: Session, scheduler: Scheduler, recall: RecallSync, history: HistorySync,
              documents: Documents, progress: Progress, conflicts: ConflictDiagnostics) -> tuple[Unit, ...]:  # fmt: skip
    """The command groups, each imported on its first call (see LazyCommands), and history's sync."""
    return (
        LazyCommands(names.STORE, lambda: _group("store").StoreCommands(session, recall, scheduler)),
        LazyCommands(
            names.RECALL, lambda: _group("recall").RecallCommands(session, recall, scheduler, progress)
        ),
        LazyCommands(names.TOOL, lambda: _group("tool").ToolCommand(session, scheduler, documents)),
        LazyCommands(
            names.SWEEP, lambda: _group("sweep").SweepCommand(session, scheduler, documents, progress)
        ),
        LazyCommands(names.REFLECT, lambda: _group("reflect").ReflectCommand(session, scheduler, progress)),
        LazyCommands(names.SESSIONS, lambda: _group("sessions").SessionCommands(session, scheduler)),
        LazyCommands(names.PASSES, lambda: _group("passes").PassCommands(session, scheduler, progress)),
        LazyCommands(
            names.PROPOSALS, lambda: _group("proposals").ProposalCommands(session, scheduler, documents)
        ),
        LazyCommands(
            names.HISTORY, lambda: _group("history").HistoryCommands(session, scheduler, documents, history)
        ),
        LazyCommands(names.BULK, lambda: _group("bulk").BulkCommands(session, scheduler)),
        LazyCommands(
            names.HEALTH, lambda: _group("health").HealthCommands(session, recall, scheduler, history)
        ),
        LazyCommands(
            names.SYNC,
            lambda: _group("sync").SyncCommands(session, scheduler, documents, progress, conflicts),
        ),
        history,
        conflicts,
    )


def _group(name: str) -> Any:
    return importlib.import_module(f"{__package__}.commands.{name}")
