"""KM601: a memory that says mostly what another visible memory says (from recall candidates)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..store.frontmatter import Span
from ..store.memory import Memory
from .model import Finding, Related


class Duplicate(Protocol):
    """What recall says of a near-duplicate (recall/duplicates.py makes them; findings import no recall)."""

    @property
    def vpath(self) -> str: ...

    @property
    def similarity(self) -> float: ...


def check(memory: Memory, duplicates: Sequence[Duplicate]) -> list[Finding]:
    if not duplicates or memory.is_index:
        return []
    line = _first_text_line(memory)
    span = Span(line, 0, line, len(memory.lines[line]) if line < len(memory.lines) else 0)
    best = duplicates[0]
    others = f" (and {len(duplicates) - 1} more)" if len(duplicates) > 1 else ""
    message = f"near-duplicate of {best.vpath}: {best.similarity:.0%} of their wording is shared{others}; merge them"
    related = tuple(Related(d.vpath, Span(0, 0, 0, 0), f"{d.similarity:.0%} similar") for d in duplicates)
    return [Finding("KM601", span, message, related=related)]


def _first_text_line(memory: Memory) -> int:
    for n in range(memory.body_line, len(memory.lines)):
        if memory.lines[n].strip():
            return n
    return max(0, min(memory.body_line, len(memory.lines) - 1))
