"""Small builders for the text edits that quick fixes make: only the bytes they must."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..store.frontmatter import Entry, Span
from ..store.memory import Memory
from .model import TextEdit

_EOL = re.compile(r"\r\n|\r|\n")


def newline(memory: Memory) -> str:
    """The file's line break, as its first 4096 characters have it (searched in place: no copy)."""
    return "\r\n" if memory.text.find("\r\n", 0, 4096) >= 0 else "\n"


def insert_at(line: int, col: int, text: str) -> TextEdit:
    return TextEdit(Span(line, col, line, col), text)


def replace(span: Span, text: str) -> TextEdit:
    return TextEdit(span, text)


def delete_entry_lines(memory: Memory, entry: Entry) -> TextEdit:
    """Remove a whole top-level entry: its key line through the last line of its value."""
    start = entry.key_span.line
    end = max(entry.value_span.end_line, start) + 1
    close = memory.frontmatter.close_line
    if start < close < end:  # an empty value may reach to the closing fence: never delete the fence
        end = close
    return TextEdit(Span(start, 0, end, 0), "")


def insert_before_close(memory: Memory, text: str) -> TextEdit:
    close = memory.frontmatter.close_line
    return insert_at(close, 0, text + newline(memory))


def insert_after_open(memory: Memory, text: str) -> TextEdit:
    return insert_at(memory.frontmatter.open_line + 1, 0, text + newline(memory))


_PLAIN_SCALAR = re.compile(r"[A-Za-z0-9_./~@+-][A-Za-z0-9_./~@+ -]*")


def yaml_scalar(value: str) -> str:
    """A value as YAML would read it back verbatim: quote when plain style would change it."""
    if (
        _PLAIN_SCALAR.fullmatch(value)
        and not value.endswith(" ")
        and value.lower() not in {"null", "true", "false", "yes", "no", "on", "off", "~"}
    ):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """The text with these edits made (line/code-point spans; overlapping edits after the first dropped)."""
    starts = [0] + [m.end() for m in _EOL.finditer(text)]

    def offset(line: int, col: int) -> int:
        if line >= len(starts):
            return len(text)
        end = starts[line + 1] if line + 1 < len(starts) else len(text)
        return min(starts[line] + col, end)

    spans = sorted(((offset(e.span.line, e.span.col), offset(e.span.end_line, e.span.end_col), e.new_text)
                    for e in edits), key=lambda s: s[:2])  # fmt: skip
    kept: list[tuple[int, int, str]] = []
    for start, end, new in spans:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, new))
    for start, end, new in reversed(kept):
        text = text[:start] + new + text[end:]
    return text
