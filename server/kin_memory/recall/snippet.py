"""Short one-line snippets of a body around the first word of the query it contains."""

from __future__ import annotations

import re

from .query import phrases

MAX_SNIPPET = 160


def snippet(body: str, query: str, width: int = MAX_SNIPPET) -> str:
    body = (body or "").lstrip("\n")
    if body.startswith("# "):  # the title heading: results show the title already
        body = body.partition("\n")[2]
    text = " ".join(body[: width * 64].split())
    if len(text) <= width:
        return text
    low = text.lower()
    pos = -1
    for p in phrases(query, limit=16):
        m = re.search(r"(?<!\w)" + re.escape(p.text), low)
        if m and (pos < 0 or m.start() < pos):
            pos = m.start()
    if pos < 0:
        return text[: width - 1] + "…"
    start = max(0, min(pos - width // 3, len(text) - width))
    end = start + width
    out = text[start:end]
    if start > 0:
        out = "…" + out[1:]
    if end < len(text):
        out = out[:-1] + "…"
    return out
