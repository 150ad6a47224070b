"""Short one-line snippets of a body around the first word of the query it contains.

Every snippet is masked: what KM602 detects as a secret is shown as its kind (`sk-ant-…****`), never as
the secret, wherever the snippet is shown (hover, search, workspace symbols, the CLI).
"""

from __future__ import annotations

import re

from ..findings.content import mask_secrets
from .query import phrases

MAX_SNIPPET = 160
SECRET_TAIL = 4096  # characters past the head searched for the end of a token cut by it
_SPACE = re.compile(r"\s")


def snippet(body: str, query: str, width: int = MAX_SNIPPET) -> str:
    body = (body or "").lstrip("\n")
    if body.startswith("# "):  # the title heading: results show the title already
        body = body.partition("\n")[2]
    text = " ".join(mask_secrets(_head(body, width * 64)).split())
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


def _head(body: str, size: int) -> str:
    """The first `size` characters, extended to the next whitespace: a secret is one unbroken token
    (a key block is masked to its end), so the cut never leaves a part of one that no longer matches."""
    if len(body) <= size:
        return body
    m = _SPACE.search(body, size, size + SECRET_TAIL)
    return body[: m.start() if m else size + SECRET_TAIL]
