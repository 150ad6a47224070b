"""Filters where people triage: search results narrowed by category, lifecycle status and age, and the
count of matches the workspace filter hid ("n more in other workspaces"), so a hidden memory is one
click away rather than silently missing."""

from __future__ import annotations

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
