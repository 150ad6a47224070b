"""Completion in frontmatter: keys, category values with their lifecycle, workspace values."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...store.categories import CATEGORIES, DESCRIPTIONS
from ...store.context import Context
from ...store.memory import Memory
from ..convert import col_from_client
from ..handlers import handler
from ..session import Session

MAX_WORKSPACE_VALUES = 200
KEY_DOCS = (
    ("category", "what kind of memory this is: drives indexing and expiry"),
    ("workspace", "the repository realpath this memory belongs to, `global`, or a label"),
)


class Completion:
    def __init__(self, session: Session) -> None:
        self.session = session

    def register(self, server: LanguageServer) -> None:
        options = lsp.CompletionOptions(trigger_characters=[":", " "])
        server.feature(lsp.TEXT_DOCUMENT_COMPLETION, options)(handler(self.complete))

    def complete(self, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        vpath = self.session.vpath_of(params.text_document.uri)
        memory = self.session.store.get(vpath) if vpath else None
        if memory is None or memory.frontmatter.status not in ("ok", "yaml_error", "unclosed"):
            return None
        n = params.position.line
        close = memory.frontmatter.close_line if memory.frontmatter.close_line > 0 else len(memory.lines)
        if not (0 < n < close):
            return None
        line = memory.lines[n]
        head = line[: col_from_client(line, params.position.character, self.session.encoding)]
        ctx = self.session.context()
        if head.startswith("category:"):
            items = category_items(ctx)
        elif head.startswith("workspace:"):
            items = self.workspace_items(ctx)
        elif ":" not in head:
            items = key_items(memory)
        else:
            items = []
        return lsp.CompletionList(is_incomplete=False, items=items)

    def workspace_items(self, ctx: Context) -> list[lsp.CompletionItem]:
        values = [*ctx.active, "global"]
        for m in self.session.store.memories():
            if isinstance(m.stamp, str) and m.stamp not in values and len(values) < MAX_WORKSPACE_VALUES:
                values.append(m.stamp)
        return [
            lsp.CompletionItem(
                label=v,
                kind=lsp.CompletionItemKind.Folder if v.startswith("/") else lsp.CompletionItemKind.Value,
                detail="active workspace" if v in ctx.active else None,
            )
            for v in values
        ]


def category_items(ctx: Context) -> list[lsp.CompletionItem]:
    t = ctx.thresholds
    return [
        lsp.CompletionItem(
            label=c,
            kind=lsp.CompletionItemKind.EnumMember,
            documentation=DESCRIPTIONS[c].format(
                stale=int(t.stale_days), episodic=int(t.episodic_days), session=int(t.session_hours)
            ),
        )
        for c in CATEGORIES
    ]


def key_items(memory: Memory) -> list[lsp.CompletionItem]:
    present = set(memory.frontmatter.keys)
    return [
        lsp.CompletionItem(
            label=key, kind=lsp.CompletionItemKind.Property, insert_text=f"{key}: ", documentation=doc
        )
        for key, doc in KEY_DOCS
        if key not in present
    ]
