"""Safe FTS5 MATCH expressions from arbitrary user text."""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})


def tokens(text: str) -> list[str]:
    """Word tokens (unicode letters/digits), FTS operators dropped, de-duplicated in order."""
    seen: list[str] = []
    for tok in _WORD.findall(text or ""):
        if tok in _OPERATORS:
            continue
        low = tok.lower()
        if low not in seen:
            seen.append(low)
    return seen


def _quote(tok: str) -> str:
    return '"' + tok.replace('"', '""') + '"'


def match_expr(text: str, mode: str = "AND") -> str | None:
    """A MATCH expression joining quoted tokens with AND/OR; None when there are no tokens."""
    toks = tokens(text)
    if not toks:
        return None
    return f" {mode} ".join(_quote(t) for t in toks)
