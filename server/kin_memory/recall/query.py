"""FTS5 MATCH expressions built safely from any user text.

Every term is a double-quoted FTS5 string (embedded quotes doubled), so nothing in the input is ever
read as syntax: hyphens, quotes, slashes, column filters (`title:x`), `NEAR`, `AND`, `*`, parentheses,
emoji or an empty query only ever produce quoted words or no expression at all. The one piece of syntax
honoured is a trailing `*` on a word (`depl*`: a prefix search), rebuilt by us, never passed through.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+(\*)?")
_PLAIN_WORD = re.compile(r"[^\W_]+")
MAX_QUERY_CHARS = 16_384  # the head of an absurdly long query is plenty to rank by
MAX_TERM_CHARS = 64  # longer "words" (base64 blobs, hashes) are noise for recall
MIN_PREFIX_CHARS = (
    4  # a shorter prefix expands to much of the vocabulary: costly at 100k, useless for ranking
)


@dataclass(frozen=True)
class Phrase:
    text: str  # the normalized word: NFKC, lower case
    prefix: bool = False

    @property
    def expr(self) -> str:
        return '"' + self.text.replace('"', '""') + '"' + ("*" if self.prefix else "")


def normalize(text: str) -> str:
    text = text[:MAX_QUERY_CHARS]
    if text.isascii():  # NFKC leaves ASCII as it is: skip the pass
        return text.lower()
    return unicodedata.normalize("NFKC", text).lower()


def phrases(text: str | None, *, prefix_last: bool = False, limit: int = 64) -> list[Phrase]:
    """Unique words of text in order, as phrases; `word*` (and, with prefix_last, a last word still
    being typed) become prefix phrases."""
    norm = normalize(text or "")
    found = list(_WORD.finditer(norm))
    out: list[Phrase] = []
    seen: set[tuple[str, bool]] = set()
    for i, m in enumerate(found):
        word = m.group(0).rstrip("*")
        if not word or len(word) > MAX_TERM_CHARS:
            continue
        last = i == len(found) - 1
        prefix = m.group(1) is not None or (prefix_last and last and m.end() == len(norm))
        prefix = prefix and len(word) >= MIN_PREFIX_CHARS
        key = (word, prefix)
        if key in seen:
            continue
        seen.add(key)
        out.append(Phrase(word, prefix))
        if len(out) >= limit:
            break
    return out


def words_near(text: str, pos: int, limit: int = 48) -> str:
    """The `limit` words of text closest to character offset pos (a hover over a long paragraph
    asks about what is under the pointer, not about the whole paragraph)."""
    spans = [m.span() for m in _WORD.finditer(text[: MAX_QUERY_CHARS * 4])]
    if len(spans) <= limit:
        return text
    nearest = sorted(range(len(spans)), key=lambda i: abs((spans[i][0] + spans[i][1]) // 2 - pos))[:limit]
    return " ".join(text[spans[i][0] : spans[i][1]] for i in sorted(nearest))


def tokens(norm: str) -> list[str]:
    """The words of normalized text in order (to count which query words a memory holds)."""
    return _PLAIN_WORD.findall(norm)


def match_expr(items: list[Phrase], mode: str = "OR") -> str | None:
    """A MATCH expression joining the phrases with AND/OR; None when there are none."""
    if not items:
        return None
    return f" {'AND' if mode == 'AND' else 'OR'} ".join(p.expr for p in items)
