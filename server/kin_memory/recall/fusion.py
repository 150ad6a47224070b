"""One ranking from two: the lexical list (words) and the dense one (meaning), weighed per query.

Reciprocal-rank fusion treats both lists as equally sure on every query. They are not: on a turn that
names what it wants ("pgbouncer port"), the lexical list is exact and meaning only agrees; on a turn that
says it in other words ("how do the marketing posts get pulled in"), the words it shares with memories are
incidental and the lexical list is noise, however high its scores. So each query's lexical list gets a
trust from two checks, and the cosine carries the rest:

- coverage: the share of the query's weight (idf) its best lexical hit matched (scoring.py);
- agreement: whether that best hit is also close in meaning: its cosine against the best cosine of any
  visible memory. A lexical winner far below the best meaning match is matching words, not the question.

    trust  = coverage(top) × max(0, 1 − (best cosine − cosine(top)) / AGREE_WINDOW)
    score  = cosine + LEXICAL_WEIGHT × trust × relevance / relevance(top)      (a lexical hit)
    score  = cosine                                                             (found by meaning only)

A memory found only by meaning must reach MEANING_FLOOR (the no-answer floor of the dense list; the
lexical list keeps its own; a hover's is HOVER_MEANING_FLOOR); a query without content words ("thanks, that worked!") is left to the
lexical list alone, which answers such chat with nothing. The constants were chosen on the labeled set's
tuning slices (scripts/recall_eval) over a wide flat region: LEXICAL_WEIGHT 0.2–0.5 and AGREE_WINDOW
0.2–0.5 all keep both slices within 0.01 of the best.

Pure: it knows nothing of SQLite or the model. Every door ranks through `fuse` (recall/service.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

LEXICAL_WEIGHT = 0.3
AGREE_WINDOW = 0.3
MEANING_FLOOR = 0.2  # cosine below which a memory found only by meaning is not an answer
# A hover compares the hovered memory's whole vector with the others', while its words come from one
# paragraph: there the words lead (a weight that makes the cosine only break near-ties among them) and
# a memory joins by meaning alone only when it is close as a whole. On the labeled hover cases the
# cosine weighed like a search's costs 0.02 nDCG (0.755 against words alone 0.774; 3: 0.770, 10: 0.775),
# and floors from 0.5 to 0.9 rank alike; lower ones bring in the file's subject, not the paragraph's.
HOVER_MEANING_FLOOR = 0.5
HOVER_LEXICAL_WEIGHT = 10.0


@dataclass(frozen=True)
class Lexical:
    key: int  # the memory's row in the index
    relevance: float  # the lexical ranking's score (higher is better)
    coverage: float  # share of the query's weight it matched, 0..1


@dataclass(frozen=True)
class Fused:
    key: int
    score: float
    lexical: bool  # found by the words (else by meaning only)


def trust(lexical: Sequence[Lexical], cosine: Mapping[int, float], best: float) -> float:
    """How far this query's lexical list is to be believed, 0..1 (see the module's doc)."""
    if not lexical:
        return 0.0
    top = lexical[0]
    gap = max(0.0, best - cosine.get(top.key, best))  # no vector yet: nothing says it disagrees
    return top.coverage * max(0.0, 1.0 - gap / AGREE_WINDOW)


def fuse(
    lexical: Sequence[Lexical],
    dense: Sequence[tuple[int, float]],
    cosine: Mapping[int, float],
    limit: int,
    *,
    floor: float = MEANING_FLOOR,
    lexical_weight: float = LEXICAL_WEIGHT,
) -> list[Fused]:
    """The best `limit` memories. lexical: best first; dense: (key, cosine), best first; cosine: the
    cosine of each lexical hit that has a vector (one without counts as close as the best)."""
    best = max([dense[0][1]] if dense else [], default=0.0)
    best = max([best, *(cosine.get(h.key, 0.0) for h in lexical)])
    t = trust(lexical, cosine, best)
    scores: dict[int, Fused] = {}
    for key, cos in dense:
        if cos < floor:
            break
        scores[key] = Fused(key, cos, False)
    if lexical:
        top = lexical[0].relevance or 1.0
        for h in lexical:
            cos = cosine.get(h.key, best)
            scores[h.key] = Fused(h.key, cos + lexical_weight * t * h.relevance / top, True)
    return sorted(scores.values(), key=lambda f: -f.score)[:limit]
