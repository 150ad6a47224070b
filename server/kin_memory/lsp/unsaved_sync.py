"""The sync and the buffers open with unsaved changes (gitsync/unsaved.py holds the rule).

Before a sync, what each such buffer's file holds on disk is noted; after it, a file the sync changed
under such a buffer gets the change merged into the buffer through a workspace edit (the editor's own
undo takes it back), or, where the two touch the same lines or the editor refuses the edit, is left as
the person typed it. Until that buffer is saved or closed its memory is remembered, and the save is
checked: a save that dropped the synced change puts a conflict (KM800) on record. The same in every
editor: only LSP requests are used.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from .. import protocol
from ..gitsync.unsaved import Behind, merge_text, settle_save
from ..store.reader import Refused, read_file
from .commands.tool import line_edit
from .features.documents import Documents
from .scheduler import Scheduler
from .session import Session, uri_to_path
from .sync_conflicts import ConflictDiagnostics

log = logging.getLogger("kin_memory.lsp")
READ_LIMIT = 4 * 1024 * 1024  # bytes of a memory's file read to compare with its buffer


class UnsavedBuffers:
    def __init__(self, session: Session, scheduler: Scheduler, documents: Documents,
                 conflicts: ConflictDiagnostics) -> None:  # fmt: skip
        self.session = session
        self.scheduler = scheduler
        self.documents = documents
        self.conflicts = conflicts
        self.behind: dict[str, Behind] = {}  # vpath → a buffer the sync wrote under, until saved or closed
        documents.saved_hooks.append(self._saved)
        documents.closed_hooks.append(self._closed)

    def _disk(self, path: Path) -> bytes | None:
        try:
            return read_file(path, READ_LIMIT, within=self.session.root).data
        except (Refused, OSError):
            return None

    def before(self) -> dict[str, bytes]:
        """The memories open with unsaved changes: what their files hold now (vpath → bytes)."""
        out = {}
        for uri, doc in list(self.documents.docs().text_documents.items()):
            vpath, path = self.session.vpath_of(uri), uri_to_path(uri)
            if not vpath or path is None:
                continue
            disk = self._disk(path)
            if disk is not None and disk != doc.source.encode("utf-8", "surrogateescape"):
                out[vpath] = disk
        return out

    async def after(
        self, held: dict[str, bytes], result: protocol.SyncResult, server: LanguageServer
    ) -> list[str]:
        """Merge what came into the buffers held; a sentence for each."""
        said = []
        for change in result.incoming:
            base = held.get(change.path)
            if base is None or change.kind == "delete":
                continue
            theirs = self._disk(self.session.path_of(change.path))
            if theirs is None or theirs == base:
                continue
            self.behind[change.path] = Behind(change.path, base, theirs, change.machine)
            if await self._merge(server, change.path, base, theirs):
                said.append(f"{change.path} had unsaved changes: the change from {change.machine} was merged "
                            "into the buffer, so saving it keeps both.")  # fmt: skip
            else:
                said.append(f"{change.path} has unsaved changes where {change.machine} changed it too: the "
                            "file holds their version and the buffer yours; saving the buffer marks the "
                            "conflict (KM800) so you can choose.")  # fmt: skip
        return said

    async def _merge(self, server: LanguageServer, vpath: str, base: bytes, theirs: bytes) -> bool:
        uri = self.session.uri_of(vpath)
        doc = self.documents.docs().text_documents.get(uri)
        if doc is None:
            return False
        ours_text = doc.source
        merged = await self.scheduler.run(
            merge_text, base, ours_text.encode("utf-8", "surrogateescape"), theirs
        )
        if merged is None:
            return False
        new_text = merged.decode("utf-8", "surrogateescape")
        if new_text == ours_text:
            return True
        document = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version)
        edit = lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
            text_document=document, edits=[line_edit(ours_text, new_text, self.session.encoding)])])  # fmt: skip
        try:
            done = await server.workspace_apply_edit_async(
                lsp.ApplyWorkspaceEditParams(edit=edit, label="Sync: the other machine's change")
            )
        except Exception as exc:  # an editor that cannot apply edits: the save is still checked
            log.info("the sync's edit of %s was not applied: %s", vpath, exc)
            return False
        return bool(done and done.applied)

    def _closed(self, vpath: str) -> None:
        self.behind.pop(vpath, None)  # closed unsaved: the file holds what came in, nothing to check

    def _saved(self, vpath: str, path: Path) -> None:
        behind = self.behind.pop(vpath, None)
        if behind is not None:
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop().create_task(self._settle(behind, path))

    async def _settle(self, behind: Behind, path: Path) -> None:
        saved = self._disk(path)
        if await self.scheduler.run(settle_save, self.session.root, behind, saved):
            self.conflicts.refresh_soon()
