"""`kin.memory.sync {remote?}`, `kin.memory.resolveConflict {uri, keep}` and
`kin.memory.conflictVersions {uri}`: the store synced through git (gitsync/door.py, the same calls as
`kin-memory sync`).

A sync runs git, so it runs off the event loop with a progress notification; the files it brings in
reach the buffers, the findings and the index as any outside change does (the watcher), and the
conflicts it leaves are published at once as KM800.
"""

from __future__ import annotations

import attrs
from pygls.lsp.server import LanguageServer

from ... import protocol
from ...gitsync.door import conflict_versions, resolve_conflict, run_sync
from ...gitsync.git import SyncError
from ...store.workspace import own_workspaces
from ..features.documents import Documents
from ..progress import Progress
from ..scheduler import Scheduler
from ..session import Session
from ..sync_conflicts import ConflictDiagnostics
from ..unsaved_sync import UnsavedBuffers
from .base import CommandFailed, Handler


class SyncCommands:
    def __init__(self, session: Session, scheduler: Scheduler, documents: Documents, progress: Progress,
                 conflicts: ConflictDiagnostics) -> None:  # fmt: skip
        self.session = session
        self.scheduler = scheduler
        self.documents = documents
        self.progress = progress
        self.conflicts = conflicts
        self.unsaved = UnsavedBuffers(session, scheduler, documents, conflicts)

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        self.server = server  # the merge into an unsaved buffer is a request to the editor
        return {
            "kin.memory.sync": self.sync,
            "kin.memory.resolveConflict": self.resolve,
            "kin.memory.conflictVersions": self.versions,
        }

    async def sync(self, params: protocol.SyncParams) -> protocol.SyncResult:
        root = self.session.root
        own = own_workspaces(self.session.active(), root)
        task = await self.progress.begin("sync", "kin-memory", message="syncing the store")
        held = self.unsaved.before()
        try:
            result = await self.scheduler.run(run_sync, root, own, params.remote, params.name)
        except SyncError as exc:
            raise CommandFailed(exc.message) from None
        finally:
            task.end("sync finished")
        self.session.forget_active()
        for change in result.incoming:
            self.documents.external_change(self.session.path_of(change.path))
        self.conflicts.refresh_soon()
        said = await self.unsaved.after(held, result, self.server)
        return attrs.evolve(result, summary=[*result.summary, *said]) if said else result

    async def resolve(self, params: protocol.ResolveConflictParams) -> protocol.OkResult:
        vpath = self._vpath(params.uri)
        try:
            await self.scheduler.run(resolve_conflict, self.session.root, vpath, params.keep)
        except SyncError as exc:
            raise CommandFailed(exc.message) from None
        self.documents.external_change(self.session.path_of(vpath))
        self.conflicts.refresh_soon()
        return protocol.OkResult(ok=True)

    async def versions(self, params: protocol.ConflictParams) -> protocol.ConflictVersionsResult:
        try:
            return await self.scheduler.run(conflict_versions, self.session.root, self._vpath(params.uri))
        except SyncError as exc:
            raise CommandFailed(exc.message) from None

    def _vpath(self, uri: str) -> str:
        vpath = self.session.vpath_of(uri)
        if vpath is None:
            raise CommandFailed("This file is not a memory of the store.")
        return vpath
