"""Ranking metrics at a cutoff, from a ranked list of ids and graded labels (2 answer, 1 related).

- nDCG@k: linear gain (the grade) discounted by log2(rank + 1), divided by the DCG of the ideal order
  of all labeled memories. Linear rather than exponential gain: with grades 1 and 2 it keeps a related
  memory worth half an answer, which is how the labels were assigned.
- MRR@k: 1 / rank of the first result with grade ≥ 1 within the top k, else 0.
- Recall@k: the share of memories with grade ≥ 1 found in the top k.

Cases without labels (nothing should be recalled) have no defined score: they are reported separately
as noise (how many results came back).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

K = 5


def dcg(gains: Iterable[float]) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def ndcg_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int = K) -> float:
    ideal = dcg(sorted(relevant.values(), reverse=True)[:k])
    if ideal == 0:
        raise ValueError("nDCG is undefined without relevant memories")
    return dcg(relevant.get(r, 0) for r in ranked[:k]) / ideal


def mrr_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int = K) -> float:
    for rank, r in enumerate(ranked[:k], start=1):
        if relevant.get(r, 0) >= 1:
            return 1.0 / rank
    return 0.0


def recall_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int = K) -> float:
    wanted = {r for r, g in relevant.items() if g >= 1}
    if not wanted:
        raise ValueError("Recall is undefined without relevant memories")
    return len(wanted & set(ranked[:k])) / len(wanted)


@dataclass(frozen=True)
class CaseScore:
    ndcg: float
    mrr: float
    recall: float


def score(ranked: Sequence[str], relevant: Mapping[str, int], k: int = K) -> CaseScore:
    return CaseScore(
        ndcg_at(ranked, relevant, k), mrr_at(ranked, relevant, k), recall_at(ranked, relevant, k)
    )


@dataclass(frozen=True)
class Summary:
    cases: int  # cases with labels (the means are over these)
    ndcg: float
    mrr: float
    recall: float
    leaks: int  # results not visible in the case's workspace
    session: int  # session memories returned (never indexed, so never a valid result)
    noise_cases: int  # cases with nothing to recall
    noise_mean: float  # mean number of results returned on those


def summarize(scores: Sequence[CaseScore], leaks: int, session: int, noise_counts: Sequence[int]) -> Summary:
    n = len(scores)

    def mean(values: Iterable[float]) -> float:
        return sum(values) / n if n else 0.0

    return Summary(
        cases=n,
        ndcg=mean(s.ndcg for s in scores),
        mrr=mean(s.mrr for s in scores),
        recall=mean(s.recall for s in scores),
        leaks=leaks,
        session=session,
        noise_cases=len(noise_counts),
        noise_mean=sum(noise_counts) / len(noise_counts) if noise_counts else 0.0,
    )
