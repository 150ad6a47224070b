"""KM604: a memory that may contradict another visible memory ("may contradict /memories/db.md: port
5432 vs 5433"), from recall candidates: the memories sharing this one's rarest words are the ones about
the same subject. The detector is findings/conflicts.py; its measured precision on the labeled
set (scripts/contradictions/) is why this is published, at hint level."""

from __future__ import annotations

from collections.abc import Iterable

from ..store.frontmatter import Span
from ..store.memory import Memory
from .claims import claims
from .conflicts import between
from .model import Finding, Related, line_span

CANDIDATES = 8  # recall candidates compared with the memory


def check(memory: Memory, others: Iterable[tuple[str, str]]) -> list[Finding]:
    """Findings for memory against (vpath, body) of other visible memories: one per contradicted memory."""
    if memory.is_index or memory.read_error:
        return []
    mine = claims(memory.body)
    if not mine:
        return []
    out = []
    for vpath, body in others:
        if vpath == memory.vpath:
            continue
        found = between(mine, claims(body))
        if found is None:
            continue
        span = line_span(memory.lines, memory.body_line + found.mine.line)
        related = (Related(vpath, Span(0, 0, 0, 0), f"states {found.theirs.shown}"),)
        out.append(Finding("KM604", span, f"may contradict {vpath}: {found.reason}", related=related))
    return out
