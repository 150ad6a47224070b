"""Hover: frontmatter keys and values explained; body text answered with related memories from recall.

Recall runs on the query pool, off the event loop: keystrokes keep being served meanwhile. With
`memory_enabled = false` in a settings file there is no recall: body text gets no hover (the settings
files are read on the pool too), while frontmatter hovers, like diagnostics, stay.
"""

from __future__ import annotations

import time

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...store.memory import Memory
from ..convert import col_from_client
from ..handlers import handler
from ..recall_sync import RecallSync
from ..scheduler import Scheduler
from ..session import Session
from .frontmatter_hover import frontmatter_hover


class Hover:
    def __init__(self, session: Session, recall: RecallSync, scheduler: Scheduler) -> None:
        self.session = session
        self.recall = recall
        self.scheduler = scheduler

    def register(self, server: LanguageServer) -> None:
        server.feature(lsp.TEXT_DOCUMENT_HOVER)(handler(self.hover))

    async def hover(self, params: lsp.HoverParams) -> lsp.Hover | None:
        vpath = self.session.vpath_of(params.text_document.uri)
        memory = self.session.store.get(vpath) if vpath else None
        if memory is None or memory.is_index:
            return None
        n = params.position.line
        line = memory.lines[n] if 0 <= n < len(memory.lines) else ""
        col = col_from_client(line, params.position.character, self.session.encoding)
        text = frontmatter_hover(memory, n, col, self.session.context())
        if text is None and memory.body_line <= n < len(memory.lines) and line.strip():
            text = await self.scheduler.query(self.related, memory, n, col)
        if text is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    def related(self, memory: Memory, line: int, col: int) -> str | None:
        if self.session.settings.hover.related == "off" or not self.session.file_settings().memory_enabled:
            return None
        with self.recall.querying():
            found = self.recall.recall.related_to(memory, line, col, self.session.active())
            note = self.recall.recall.semantic_note() if found else None
        from ...recall.render import related_markdown

        return related_markdown(found, time.time(), self.session.uri_of, note) if found else None
