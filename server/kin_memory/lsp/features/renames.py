"""`workspace/willRenameFiles`: when the editor renames or moves a memory (or a folder of them), the
links in MEMORY.md and the `/memories/…` references in other memories follow it, as part of the same
edit (see findings/relink.py). Open documents are edited at the version the editor has; closed ones as on
disk."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...findings.model import TextEdit
from ...findings.relink import mentions, relink
from ...store.frontmatter import Span, split_lines
from ...store.memory import MAX_READ_BYTES
from ...store.paths import INDEX_VPATH, relative_parts, virtual_of_rel
from ...store.reader import Refused, read_file
from ..convert import range_json
from ..handlers import handler
from ..session import Session, uri_to_path

FILTERS = [
    lsp.FileOperationFilter(scheme="file", pattern=lsp.FileOperationPattern(glob="**/*.md", matches=lsp.FileOperationPatternKind.File)),
    lsp.FileOperationFilter(scheme="file", pattern=lsp.FileOperationPattern(glob="**", matches=lsp.FileOperationPatternKind.Folder)),
]  # fmt: skip


class Renames:
    def __init__(self, session: Session, version_of, converter) -> None:
        self.session = session
        self.version_of = version_of  # uri → the open document's version, or None
        self.converter = converter

    def register(self, server: LanguageServer) -> None:
        options = lsp.FileOperationRegistrationOptions(filters=FILTERS)
        server.feature(lsp.WORKSPACE_WILL_RENAME_FILES, options)(handler(self.will_rename))

    def _vpath(self, uri: str) -> str | None:
        path = uri_to_path(uri)
        parts = relative_parts(self.session.root, path) if path is not None else None
        if not parts or any(p.startswith(".") for p in parts):
            return None
        return virtual_of_rel("/".join(parts))

    def _text(self, vpath: str) -> str | None:
        """An open document's text, else the file's (None when unreadable or not UTF-8)."""
        store = self.session.store
        memory = store.get(vpath)
        if memory is not None and store.is_open(vpath):
            return memory.text
        try:
            return read_file(
                self.session.path_of(vpath), MAX_READ_BYTES, within=self.session.root
            ).data.decode()
        except (Refused, OSError, UnicodeDecodeError):
            return None

    def will_rename(self, params: lsp.RenameFilesParams) -> lsp.WorkspaceEdit | None:
        moves: list[tuple[str, str]] = []
        for f in params.files:
            old, new = self._vpath(f.old_uri), self._vpath(f.new_uri)
            if old and new and old != new:
                moves.append((old, new))
        if not moves:
            return None
        from ...findings.edits import apply_edits

        store = self.session.store
        index = store.index_file()
        targets = [m.vpath for m in store.memories()] + ([index.vpath] if index is not None else [])
        changes = []
        for vpath in targets:
            text = self._text(vpath)
            if text is None or not any(mentions(text, old) for old, _ in moves):
                continue
            is_index = vpath == INDEX_VPATH
            if len(moves) == 1:  # the usual case: only the paths change, nothing else of the file is sent
                old, new = moves[0]
                edits = relink(vpath, text, old, new, is_index=is_index)
            else:  # several at once: applied one after the other, sent as the whole edited text
                edited = text
                for old, new in moves:
                    edited = apply_edits(edited, relink(vpath, edited, old, new, is_index=is_index))
                lines = split_lines(text)
                edits = (
                    [TextEdit(Span(0, 0, len(lines) - 1, len(lines[-1])), edited)] if edited != text else []
                )
            if edits:
                changes.append(self._document_edit(vpath, text, edits))
        return lsp.WorkspaceEdit(document_changes=changes) if changes else None

    def _document_edit(self, vpath: str, text: str, edits: list[TextEdit]) -> lsp.TextDocumentEdit:
        lines = split_lines(text)
        uri = self.session.uri_of(vpath)
        document = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=self.version_of(uri))
        return lsp.TextDocumentEdit(text_document=document, edits=[
            lsp.TextEdit(range=self.converter.structure(range_json(e.span, lines, self.session.encoding), lsp.Range),
                         new_text=e.new_text)
            for e in edits
        ])  # fmt: skip
