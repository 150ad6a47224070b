"""Completion in frontmatter: keys, category values with their lifecycle, workspace values.

A value item replaces the whole value already on the line (its `textEdit` spans it), so a partly typed
`workspace: /home/me/src/ap` or `category: project-f` is completed, never appended to. Values the
server would flag itself (a stamp whose repository is gone, a path that is not canonical, an unsafe
label, KM301/KM302/KM304/KM305) are not offered.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...findings.edits import yaml_scalar
from ...findings.workspace import flagged
from ...store.categories import CATEGORIES, DESCRIPTIONS, PREFERENCE
from ...store.context import Context
from ...store.memory import Memory
from ...store.workspace import GLOBAL
from ..convert import col_from_client, col_to_client
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
        col = col_from_client(line, params.position.character, self.session.encoding)
        head = line[:col]
        ctx = self.session.context()
        if head.startswith("category:"):
            items = category_items(ctx)
        elif head.startswith("workspace:"):
            items = self.workspace_items(ctx, memory)
        elif ":" not in head:
            return lsp.CompletionList(is_incomplete=False, items=key_items(memory))
        else:
            return lsp.CompletionList(is_incomplete=False, items=[])
        span = value_span(line, col)
        for item in items:
            self._replace_value(item, line, n, span)
        return lsp.CompletionList(is_incomplete=False, items=items)

    def _replace_value(self, item: lsp.CompletionItem, line: str, n: int, span: ValueSpan) -> None:
        """The item's text replaces the value on the line (a space after the colon when there is none)."""
        text = yaml_scalar(item.label)
        new_text = (" " if span.needs_space else "") + text
        enc = self.session.encoding
        item.text_edit = lsp.TextEdit(
            range=lsp.Range(
                start=lsp.Position(line=n, character=col_to_client(line, span.start, enc)),
                end=lsp.Position(line=n, character=col_to_client(line, span.end, enc)),
            ),
            new_text=new_text,
        )
        # Clients filter on the text from the range's start to the cursor: what was typed, quote included.
        item.filter_text = span.quote + item.label

    def workspace_items(self, ctx: Context, memory: Memory) -> list[lsp.CompletionItem]:
        if memory.category == PREFERENCE:  # any other stamp narrows a global-by-design memory (KM306)
            return [lsp.CompletionItem(label=GLOBAL, kind=lsp.CompletionItemKind.Value)]
        values = [*(a for a in ctx.active if not flagged(a, ctx)), GLOBAL]
        for m in self.session.store.memories():
            if len(values) >= MAX_WORKSPACE_VALUES:
                break
            if isinstance(m.stamp, str) and m.stamp not in values and not flagged(m.stamp, ctx):
                values.append(m.stamp)
        return [
            lsp.CompletionItem(
                label=v,
                kind=lsp.CompletionItemKind.Folder if v.startswith("/") else lsp.CompletionItemKind.Value,
                detail="active workspace" if v in ctx.active else None,
            )
            for v in values
        ]


@dataclass(frozen=True)
class ValueSpan:
    start: int  # code-point columns
    end: int
    needs_space: bool  # the edit starts right after the colon
    quote: str  # the quote the typed value opens with, if any


def value_span(line: str, col: int) -> ValueSpan:
    """The value after `key:` on this line, as far as a ` #` comment: what a completion replaces. The
    span always contains the cursor (LSP requires it), even when the cursor sits in the spaces before
    the value."""
    colon = line.index(":") + 1
    rest = line[colon:]
    start = colon + len(rest) - len(rest.lstrip())
    comment = line.find(" #", start)
    end = len((line if comment < 0 else line[:comment]).rstrip())
    end = max(end, start)
    if col < start:
        start = col
    end = max(end, col)
    typed = line[start:col].lstrip()
    return ValueSpan(start, end, start == colon, typed[:1] if typed[:1] in ("'", '"') else "")


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
