"""Short one-line snippets of a body around the first word of the query it contains.

Every snippet is masked: what KM602 detects as a secret is shown as its kind (`sk-ant-…****`), never as
the secret, wherever the snippet is shown (hover, search, workspace symbols, the CLI). Only the
neighbourhood of the window is masked, in whole words: masking all the text read for every hit would
cost more than the query itself.
"""

from __future__ import annotations

import re

from ..findings.content import mask_secrets
from .query import phrases

MAX_SNIPPET = 160
WORD_SLACK = 24  # characters a snippet's edge may move to fall between two words
SECRET_TAIL = 4096  # characters past the read window searched for the end of a word it cuts
_SPACE = re.compile(r"\s")


def snippet(body: str, query: str, width: int = MAX_SNIPPET) -> str:
    body = (body or "").lstrip("\n")
    if body.startswith("# "):  # the title heading: results show the title already
        body = body.partition("\n")[2]
    text = " ".join(_head(body, width * 64).split())
    if "-----BEGIN" in text:  # a key block's lines match nothing alone: mask the whole text first
        text = mask_secrets(text)
    if len(text) <= width:
        return mask_secrets(text)
    pos = _first_hit(text, query)
    # The window lies within width/3 before the hit and width after it: mask a wider stretch, cut at
    # spaces so no secret is cut in two, then place the window in what the masks left.
    start = _word_start(text, max(0, pos - width))
    end = _word_end(text, max(pos, 0) + 2 * width)
    piece = text[start:end]
    near = mask_secrets(piece)
    if pos >= 0:
        pos = pos - start if near == piece else _first_hit(near, query)  # masks move the words
    return _window(near, pos, width, start > 0, end < len(text))


def _first_hit(text: str, query: str) -> int:
    """Where the first word of text that starts with a query word is, -1 if none does."""
    words = sorted({p.text for p in phrases(query, limit=16)}, key=len, reverse=True)
    if not words:
        return -1
    # One pattern for all the words: a search per word cost more than the rest of a hover.
    m = re.search(r"(?<!\w)(?:" + "|".join(map(re.escape, words)) + ")", text.lower())
    return m.start() if m else -1


def _window(text: str, pos: int, width: int, more_before: bool, more_after: bool) -> str:
    """At most `width` characters of text around pos (a third of them before it), cut between words
    ("…ns on four nodes" never), with … where text goes on."""
    if pos < 0:
        start = 0
    else:
        start = max(0, min(pos - width // 3, len(text) - width))
    before = start > 0 or more_before
    if start > 0 and text[start - 1] != " ":  # move on to the next word start, not past the hit
        space = text.find(" ", start, min(start + WORD_SLACK, pos if pos > start else len(text)))
        if space >= 0:
            start = space + 1
    room = width - (1 if before else 0)
    end = min(len(text), start + room)
    after = end < len(text) or more_after
    if after:
        end = min(end, start + room - 1)  # room for the closing …
        if end < len(text) and text[end] != " ":  # back to the last word end, unless one word is that long
            space = text.rfind(" ", max(start + 1, end - WORD_SLACK), end)
            if space >= 0:
                end = space
    return ("…" if before else "") + text[start:end].rstrip() + ("…" if after else "")


def _word_start(text: str, i: int) -> int:
    return text.rfind(" ", 0, i) + 1


def _word_end(text: str, j: int) -> int:
    k = text.find(" ", j)
    return len(text) if k < 0 else k


def _head(body: str, size: int) -> str:
    """The first `size` characters, extended to the next whitespace: a secret is one unbroken word
    (a key block is masked to its end), so the cut never leaves a part of one that no longer matches."""
    if len(body) <= size:
        return body
    m = _SPACE.search(body, size, size + SECRET_TAIL)
    return body[: m.start() if m else size + SECRET_TAIL]
