"""Symbols and links: a memory's headings and keys, MEMORY.md's links, workspace symbols by recall (none
while memory is disabled; titles come masked from recall)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...findings.budget import link_targets
from ...store.frontmatter import Span
from ..convert import range_json
from ..handlers import handler
from ..recall_sync import RecallSync
from ..scheduler import Scheduler
from ..session import Session

WORKSPACE_SYMBOLS = 50
SYMBOLS_WAIT = 1.5  # seconds workspace symbols wait for the index to be current
_TOP = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))

if TYPE_CHECKING:
    from ...recall.index import Hit


class Symbols:
    def __init__(self, session: Session, recall: RecallSync, scheduler: Scheduler, converter) -> None:
        self.session = session
        self.recall = recall
        self.scheduler = scheduler
        self.converter = converter

    def register(self, server: LanguageServer) -> None:
        server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(handler(self.document_symbols))
        server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_LINK)(handler(self.document_links))
        server.feature(lsp.WORKSPACE_SYMBOL)(handler(self.workspace_symbols))

    def _range(self, span: Span, lines) -> lsp.Range:
        return self.converter.structure(range_json(span, lines, self.session.encoding), lsp.Range)

    def document_symbols(self, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        vpath = self.session.vpath_of(params.text_document.uri)
        memory = self.session.store.get(vpath) if vpath else None
        if memory is None:
            return []
        out = []
        for e in memory.frontmatter.entries:
            rng = self._range(e.key_span, memory.lines)
            out.append(lsp.DocumentSymbol(name=e.key, kind=lsp.SymbolKind.Property, range=rng,
                                          selection_range=rng, detail=e.raw or None))  # fmt: skip
        for n, line in enumerate(memory.lines[memory.body_line :], memory.body_line):
            if line.startswith("#"):
                rng = self._range(Span(n, 0, n, len(line)), memory.lines)
                name = line.lstrip("#").strip() or "(heading)"
                out.append(
                    lsp.DocumentSymbol(name=name, kind=lsp.SymbolKind.String, range=rng, selection_range=rng)
                )
        return out

    def document_links(self, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
        vpath = self.session.vpath_of(params.text_document.uri)
        memory = self.session.store.get(vpath) if vpath else None
        if memory is None or not memory.is_index:
            return []
        return [
            lsp.DocumentLink(
                range=self._range(Span(n, start, n, end), memory.lines), target=self.session.uri_of(target)
            )
            for n, start, end, target in link_targets(memory)
            if target and self.session.store.get(target)
        ]

    async def workspace_symbols(self, params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
        active = self.session.active()
        # No "nothing found" while the index is still filling: wait for it a little (bounded).
        await self.scheduler.run(self.recall.wait_current, SYMBOLS_WAIT)
        hits = await self.scheduler.query(self._search, params.query, active)
        return [
            lsp.SymbolInformation(name=h.title or h.vpath, kind=lsp.SymbolKind.File, container_name=h.vpath,
                                  location=lsp.Location(uri=self.session.uri_of(h.vpath), range=_TOP))
            for h, _ in hits
        ]  # fmt: skip

    def _search(self, query: str, active: tuple[str, ...]) -> list[tuple[Hit, str]]:
        """Recall by title and text (on the pool: reads the settings files); nothing while
        `memory_enabled = false` turns recall off."""
        if not self.session.file_settings().memory_enabled:
            return []
        with self.recall.querying():
            return self.recall.recall.search(query, active, WORKSPACE_SYMBOLS, prefix_last=True)
