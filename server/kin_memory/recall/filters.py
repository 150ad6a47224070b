"""Filters where people triage: search results narrowed by category, lifecycle status and age, and the
count of matches the workspace filter hid ("n more in other workspaces"), so a hidden memory is one
click away rather than silently missing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..store.lifecycle import Thresholds, lifecycle
from .index import Hit

OVERFETCH = 4  # results fetched per result shown when a filter may drop some


@dataclass(frozen=True)
class HitFilter:
    category: str | None = None
    status: str | None = None  # ok | stale | expiring | expired
    max_age_days: float | None = None

    @property
    def active(self) -> bool:
        return self.category is not None or self.status is not None or self.max_age_days is not None


_WORD = re.compile(r"^(category|status|age):<?(\S+)$", re.IGNORECASE)
_CATEGORIES = ("project-fact", "preference", "episodic", "session")
_STATUSES = ("ok", "stale", "expiring", "expired")


def parse_query(query: str, base: HitFilter) -> tuple[str, HitFilter]:
    """`category:…`, `status:…` and `age:<N` (days) words typed in a query are filters (what every
    editor's search box accepts); the rest is the query. Explicit parameters win over typed words."""
    words: list[str] = []
    category, status, age = base.category, base.status, base.max_age_days
    typed = False
    for word in query.split():
        m = _WORD.match(word)
        key, value = (m[1].lower(), m[2]) if m else ("", "")
        if key == "category" and value in _CATEGORIES:
            category, typed = category or value, True
        elif key == "status" and value in _STATUSES:
            status, typed = status or value, True
        elif key == "age" and re.fullmatch(r"\d+(\.\d+)?d?", value):
            age, typed = age if age is not None else float(value.rstrip("d")), True
        else:
            words.append(word)
    if not typed:
        return query, base
    merged = HitFilter(category=category, status=status, max_age_days=age)
    return " ".join(words), merged


def keep(hit: Hit, f: HitFilter, now: float, t: Thresholds) -> bool:
    if f.category is not None and hit.category != f.category:
        return False
    life = lifecycle(hit.category, hit.mtime, now, t)
    if f.status is not None and life.status != f.status:
        return False
    return f.max_age_days is None or life.age_days <= f.max_age_days


def narrowed(
    hits: Sequence[tuple[Hit, str]], f: HitFilter, now: float, t: Thresholds, limit: int
) -> list[tuple[Hit, str]]:
    return [h for h in hits if keep(h[0], f, now, t)][:limit]


def hidden_count(shown: Sequence[tuple[Hit, str]], everywhere: Sequence[tuple[Hit, str]]) -> int:
    """Matches of the operator's view that the workspace filter left out."""
    seen = {h.vpath for h, _ in shown}
    return sum(1 for h, _ in everywhere if h.vpath not in seen)
