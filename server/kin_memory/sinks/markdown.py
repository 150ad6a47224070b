"""Untrusted text placed in markdown (hover, completion documentation), rendered inert.

Two forms. `inline` is running text: every character markdown or HTML gives a meaning to is escaped, so
no link, autolink, `command:` URI, image, raw HTML, emphasis, heading, list or table can form, whatever
the text. `code_span` shows a value verbatim in a code span whose fence is longer than any backtick run
inside it, so the text can never close the span. Both escape control characters and line breaks first
(`\\n` is shown, never rendered as a paragraph break), so the text stays on its line.
"""

from __future__ import annotations

import re

from .controls import escape_controls

ELLIPSIS = "…"
# Backslash-escaped: every punctuation character CommonMark or GFM gives a meaning to inside a line
# ($ and ^ are math and superscript in some renderers, @ starts an email autolink).
_BACKSLASHED = frozenset("\\`*_[]()#!|~{}$@^")
# As entities: HTML can never form, and `:` breaks every scheme (http:, command:, javascript:).
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", ":": "&#58;"}
# At the start of a line these open a block (list, heading underline, quote, ordered list).
_BLOCK_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")
_WWW = re.compile(r"(?i)(www)\.")  # GFM links a bare www. name


def _clip(text: str, limit: int | None) -> str:
    """Cut before escaping: a cut escape would be a markdown construct of its own."""
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + ELLIPSIS
    return text


def inline(text: str, limit: int | None = None) -> str:
    """Running text that renders as exactly these characters, on one line."""
    raw = escape_controls(_clip(text or "", limit))
    out: list[str] = []
    for ch in raw:
        if ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif ch in _BACKSLASHED:
            out.append("\\" + ch)
        else:
            out.append(ch)
    escaped = _WWW.sub(r"\1\\.", "".join(out))
    return _BLOCK_START.sub(_escape_block_start, escaped, count=1)


def _escape_block_start(m: re.Match[str]) -> str:
    lead, marker = m.group(1), m.group(2)
    if marker.isdigit():  # `12.` or `12)`: escape the delimiter that follows the number
        return f"{lead}{marker}\\"
    return f"{lead}\\{marker}"


def code_span(text: str, limit: int | None = None) -> str:
    """A value shown verbatim (controls escaped) in a code span nothing inside can close."""
    raw = escape_controls(_clip(text or "", limit))
    longest = max((len(run) for run in re.findall(r"`+", raw)), default=0)
    fence = "`" * (longest + 1)
    # A space each side only where CommonMark needs one (it strips exactly one from both sides): a leading
    # or trailing backtick stays inside, a value with spaces at both ends keeps them. Elsewhere none, so an
    # editor that shows the markdown as text (Neovim hides the backticks) shows no doubled spaces.
    pad = " " if not raw.strip(" ") or raw[0] == "`" or raw[-1] == "`" or (raw[0] == raw[-1] == " ") else ""
    return f"{fence}{pad}{raw}{pad}{fence}"
