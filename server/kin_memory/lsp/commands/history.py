"""History and review commands: `kin.memory.history`, `kin.memory.version`, `kin.memory.restore`,
`kin.memory.changes`, `kin.memory.acceptChanges`, `kin.memory.revertChanges`.

Everything runs off the event loop. A restore or a revert of a memory open in the editor with unsaved
changes is refused (what the user is typing is never overwritten); an unmodified buffer follows the file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ... import protocol
from ...bounds import in_range
from ...history import review
from ...history.db import HistoryUnavailable
from ...history.labels import written_by
from ...history.query import HistoryError, content_of, current_version, history_of, no_version
from ...history.restore import restore
from ...history.sync import catch_up
from ...store.memory import MAX_READ_BYTES
from ...store.reader import Refused, read_file
from ...tool.guard import GuardError, resolve
from ..features.documents import Documents
from ..history_sync import HistorySync
from ..scheduler import Scheduler
from ..session import Session
from .base import CommandFailed, Handler

T = TypeVar("T")
CURRENT_WAIT = 10.0  # seconds a command waits for queued captures (a write just seen by the watcher)


class HistoryCommands:
    def __init__(
        self, session: Session, scheduler: Scheduler, documents: Documents, sync: HistorySync
    ) -> None:
        self.session = session
        self.scheduler = scheduler
        self.documents = documents
        self.sync = sync

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {
            "kin.memory.history": self.history,
            "kin.memory.version": self.version,
            "kin.memory.restore": self.restore,
            "kin.memory.changes": self.changes,
            "kin.memory.acceptChanges": self.accept,
            "kin.memory.revertChanges": self.revert,
        }

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        await self.scheduler.run(self.sync.wait_current, CURRENT_WAIT)
        try:
            return await self.scheduler.run(fn, *args)
        except HistoryError as exc:
            raise CommandFailed(str(exc)) from None

    def _path(self, vpath: str) -> str:
        try:
            t = resolve(self.session.root, vpath)
        except GuardError as exc:
            raise CommandFailed(exc.message) from None
        if t.is_root:
            raise CommandFailed(f"{vpath} is the store itself, not a memory.")
        return vpath

    async def history(self, params: protocol.HistoryParams) -> protocol.HistoryResult:
        vpath = self._path(params.path)
        found = await self._run(history_of, self.session.root, vpath)
        current = await self._run(current_version, self.session.root, vpath, found)
        return protocol.HistoryResult(path=vpath, versions=[
            protocol.HistoryVersion(version=v.version, time=v.time, source=v.source, by=written_by(v.source),
                                    bytes=v.bytes, deleted=v.deleted)
            for v in found
        ], current=current)  # fmt: skip

    async def _version(self, vpath: str, version: int) -> int:
        """A version number SQLite can hold: anything else is a bad argument (InvalidParams), told with
        the versions the memory has."""
        if in_range(version):
            return version
        found = await self._run(history_of, self.session.root, vpath)
        raise JsonRpcInvalidParams(no_version(vpath, version, [v.version for v in found]))

    async def version(self, params: protocol.VersionParams) -> protocol.VersionContentResult:
        vpath = self._path(params.path)
        await self._version(vpath, params.version)
        data = await self._run(content_of, self.session.root, vpath, params.version)
        return protocol.VersionContentResult(
            path=vpath, version=params.version, text=data.decode("utf-8", "replace")
        )

    async def restore(self, params: protocol.VersionParams) -> protocol.RestoreResult:
        vpath = self._path(params.path)
        await self._version(vpath, params.version)
        self._refuse_unsaved(vpath)
        written = await self._run(restore, self.session.root, vpath, params.version)
        self.documents.external_change(self.session.path_of(vpath))
        return protocol.RestoreResult(path=vpath, bytes=written)

    async def changes(self, params: protocol.ChangesParams) -> protocol.ChangesResult:
        # The watcher's captures keep the versions current (waited for in _run); a scan of the store only
        # when asked (an explicit request), not for a view refreshed after every burst of file events.
        if params.rescan:
            await self._run(self._catch_up)
        found = await self._run(review.changes, self.session.root)
        return protocol.ChangesResult(changes=[
            protocol.QueueEntry(path=c.path, uri=self.session.uri_of(c.path), kind=c.kind, since=c.since,
                                source=c.source, by=written_by(c.source), diff=c.diff, version=c.version,
                                reviewed_version=c.reviewed_version)
            for c in found
        ])  # fmt: skip

    def _catch_up(self) -> None:
        try:
            catch_up(self.session.root)
        except HistoryUnavailable as exc:
            raise HistoryError(f"The changes cannot be read: {exc.reason}.") from None

    async def accept(self, params: protocol.PathsParams) -> protocol.PathsResult:
        paths = None if params.all else [self._path(p) for p in params.paths]
        done = await self._run(review.accept, self.session.root, paths)
        return protocol.PathsResult(paths=done)

    async def revert(self, params: protocol.PathsParams) -> protocol.PathsResult:
        if params.all:
            queued = await self._run(review.changes, self.session.root)
            paths = [c.path for c in queued]
        else:
            paths = [self._path(p) for p in params.paths]
        done: list[str] = []
        conflicts: list[protocol.Conflict] = []
        for vpath in paths:
            if self._unsaved(vpath):
                conflicts.append(
                    protocol.Conflict(path=vpath, reason="it is open in the editor with unsaved changes")
                )
                continue
            try:
                await self._run(review.revert, self.session.root, vpath)
            except CommandFailed as exc:
                conflicts.append(protocol.Conflict(path=vpath, reason=str(exc.message)))
                continue
            self.documents.external_change(self.session.path_of(vpath))
            done.append(vpath)
        return protocol.PathsResult(paths=done, conflicts=conflicts)

    def _unsaved(self, vpath: str) -> bool:
        store = self.session.store
        if not store.is_open(vpath):
            return False
        memory = store.get(vpath)
        try:
            disk = read_file(self.session.path_of(vpath), MAX_READ_BYTES).data.decode("utf-8", "replace")
        except (Refused, OSError):
            disk = None
        return memory is not None and memory.text != disk

    def _refuse_unsaved(self, vpath: str) -> None:
        if self._unsaved(vpath):
            raise CommandFailed(
                f"{vpath} is open in the editor with unsaved changes: save or revert them first."
            )
