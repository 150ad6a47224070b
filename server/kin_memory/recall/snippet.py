"""Short snippets around the first matching term."""

from __future__ import annotations

import re

from .query import tokens

MAX_SNIPPET = 160


def snippet(body: str, query: str, width: int = MAX_SNIPPET) -> str:
    text = " ".join((body or "").split())
    if len(text) <= width:
        return text
    low = text.lower()
    pos = -1
    for tok in tokens(query):
        m = re.search(r"(?<!\w)" + re.escape(tok), low)
        if m and (pos < 0 or m.start() < pos):
            pos = m.start()
    if pos < 0:
        return text[: width - 1] + "…"
    start = max(0, pos - width // 3)
    end = min(len(text), start + width)
    start = max(0, end - width)
    out = text[start:end]
    if start > 0:
        out = "…" + out[1:]
    if end < len(text):
        out = out[:-1] + "…"
    return out
