"""Scoring the candidates FTS5 found: one bm25 per query term, however many forms it matched.

FTS5 ranks a query of alternatives ("revert" OR "reverted" OR "reverts") as separate words: a memory
holding three forms of a word scores three times, and a common word's many forms outweigh the one rare
word that names what is asked. So FTS5 only gathers a pool of candidates; they are scored here with
BM25F over the terms (each term: all its alternatives counted together, one idf), on the same columns
and weights as the index, then scaled by coverage: the share of the query's weight the memory matches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .query import normalize, tokens
from .records import path_text
from .terms import Lexicon, Term

K1 = 1.2  # the usual bm25 parameters: tuning them on the labeled set changed nothing
B = 0.75
COLUMN_WEIGHTS = (6.0, 4.0, 1.0)  # path, title, body: as the index ranks them
COVER_CHARS = 8192  # the head of a body read to count a candidate's words


@dataclass(frozen=True)
class Candidate:
    rowid: int
    vpath: str
    title: str
    category: str
    workspace: str | None
    body: str
    mtime: float
    rank: float  # FTS5's bm25 (higher is better): how the candidate was picked


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    relevance: float  # BM25F × coverage
    coverage: float  # share of the query's weight matched, 0..1


@dataclass(frozen=True)
class Floor:
    """What a memory must reach to be an answer at all: fewer results rather than noise."""

    coverage: float  # share of the query's weight (idf of its terms) the memory matches
    relative: float  # share of the best memory's relevance


def score(cands: Sequence[Candidate], terms: Sequence[Term], lex: Lexicon) -> list[Scored]:
    """Each candidate's BM25F over the terms (column lengths normalized by the pool's averages),
    times its coverage."""
    if not cands or not terms:
        return []
    weights = [lex.idf(t) for t in terms]
    # Words no memory holds weigh nothing: they cannot tell memories apart.
    whole = sum(w for t, w in zip(terms, weights, strict=True) if t.df > 0) or 1.0
    matcher = _Matcher(terms)
    columns = [_columns(c) for c in cands]
    avg = [max(1.0, sum(len(cols[i]) for cols in columns) / len(columns)) for i in range(3)]
    out = []
    for cand, cols in zip(cands, columns, strict=True):
        tf = [0.0] * len(terms)
        for i, words in enumerate(cols):
            norm = COLUMN_WEIGHTS[i] / (1.0 - B + B * len(words) / avg[i])
            for t, n in enumerate(matcher.counts(words)):
                tf[t] += n * norm
        bm25 = sum(w * f / (K1 + f) for w, f in zip(weights, tf, strict=True) if f > 0)
        matched = sum(w for w, f in zip(weights, tf, strict=True) if f > 0)
        if not matched:
            # FTS5 found it, so a word matched past the head read here or by its diacritics (FTS5
            # folds them, this count does not): rank it as weakly as the least word can.
            matched = min(weights)
            bm25 = matched * 1.0 / (K1 + 1.0)
        coverage = min(1.0, matched / whole)
        out.append(Scored(cand, bm25 * coverage, coverage))
    return out


def _columns(c: Candidate) -> tuple[list[str], list[str], list[str]]:
    return (
        tokens(normalize(path_text(c.vpath))),
        tokens(normalize(c.title)),
        tokens(normalize(c.body[:COVER_CHARS])),
    )


class _Matcher:
    """Counts, in a list of words, how many are an alternative of each term."""

    def __init__(self, terms: Sequence[Term]) -> None:
        self.size = len(terms)
        self.exact: dict[str, int] = {}
        self.prefixes: list[tuple[str, int]] = []
        self.phrases: list[tuple[list[str], int]] = []
        for i, t in enumerate(terms):
            for alt in t.alts:
                if alt.prefix:
                    self.prefixes.append((alt.text, i))
                elif " " in alt.text:
                    self.phrases.append((alt.text.split(), i))
                else:
                    self.exact.setdefault(alt.text, i)

    def counts(self, words: list[str]) -> list[int]:
        n = [0] * self.size
        bag = Counter(words)  # counted in C: far cheaper than a Python loop over a long body
        for alt, i in self.exact.items():
            n[i] += bag.get(alt, 0)
        for prefix, i in self.prefixes:
            n[i] += sum(c for w, c in bag.items() if w.startswith(prefix))
        for parts, i in self.phrases:
            if all(p in bag for p in parts):
                n[i] += _phrase_count(words, parts)
        return n


def _phrase_count(words: list[str], parts: list[str]) -> int:
    k = len(parts)
    return sum(1 for j in range(len(words) - k + 1) if words[j : j + k] == parts)
