"""Near-duplicates among recall candidates: word-shingle Jaccard similarity.

Candidates come from the index (the memories sharing the rarest words), so finding the duplicates of
one memory costs one query and a few set operations, never a scan of the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .index import Hit, RecallIndex

SHINGLE = 3
THRESHOLD = 0.5  # Jaccard of word 3-shingles: above this, two memories say mostly the same thing
DUPLICATE_TERMS = 12  # the rarest words of a body asked for candidates
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Duplicate:
    vpath: str
    similarity: float


def shingles(text: str, k: int = SHINGLE) -> frozenset[tuple[str, ...]]:
    words = [w.lower() for w in _WORD.findall(text or "")]
    if len(words) < k:
        return frozenset({tuple(words)}) if words else frozenset()
    # The k-word windows as one zip of k shifted lists: a slice and a tuple per window cost a hover
    # a tenth of its time.
    return frozenset(zip(*(words[i:] for i in range(k)), strict=False))  # shorter lists end it


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def rank_duplicates_first(
    body: str, hits: list[Hit], threshold: float = THRESHOLD
) -> list[tuple[Hit, float]]:
    """Hits with their similarity to body, likely duplicates first (stable otherwise)."""
    mine = shingles(body)
    scored = [(h, jaccard(mine, shingles(h.body))) for h in hits]
    return sorted(scored, key=lambda pair: pair[1] < threshold)


def near_duplicates(
    index: RecallIndex,
    vpath: str,
    body: str,
    active: tuple[str, ...] | None,
    threshold: float = THRESHOLD,
    candidates: int = 8,
) -> list[Duplicate]:
    if len(shingles(body)) < 2:  # a one-line memory is too short to call anything its duplicate
        return []
    # The rarest words find the candidates and the shingles judge them: no need for the hover's
    # longer query and ranking (this runs when a memory is opened or changed).
    hits = index.related(body, active, limit=candidates, exclude=vpath, keep=DUPLICATE_TERMS, rescore=False)
    found = [
        Duplicate(h.vpath, round(sim, 2))
        for h, sim in rank_duplicates_first(body, hits, threshold)
        if sim >= threshold
    ]
    return sorted(found, key=lambda d: -d.similarity)
