"""Reading the recall index: a search, the memories related to a text, and the ranking of both.

A query is a person's turn to the agent as often as a keyword list: terms.py turns its words into terms
(stop words dropped, word forms, shorthand, a one-typo fix, all looked up in the vocabulary snapshot,
caches/recall_vocab.py), FTS5 gathers candidates, scoring.py ranks them, and a floor keeps weak matches out.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..caches.recall_vocab import Vocabulary
from ..store.workspace import GLOBAL
from .database import Database
from .query import Phrase, match_expr, phrases
from .scoring import Candidate, Floor, Scored, score
from .terms import Lexicon, Term, content_words, is_content, with_multiword
from .words import STOP_WORDS

log = logging.getLogger("kin_memory.recall")

WEIGHTS = (6.0, 4.0, 1.0)  # bm25 column weights: path, title, body
PREFERENCE_HALF_LIFE_DAYS = 90.0
PREFERENCE_TIE = 0.05  # a new preference passes a memory scoring up to 5% more, an old one hardly
AND_FIRST_TERMS = 4  # a longer query (a hover's paragraph) seldom has a pool of memories holding it all
RERANK_ROOM = 10  # candidates past the limit that are scored too: FTS5's order is only a first guess
COMMON_SHARE = 0.02  # a term in more than 2% of memories says little about what is related
MAX_RELATED_TERMS = 24
MIN_COMMON = 50  # in a small store no word is too common to relate memories
BROAD = 2000  # matches beyond which a query is ranked over the most recent (see _candidates)
COUNT_FRESH = 5.0  # seconds the memory count for the common-word cutoff is reused

# Measured on the labeled set (scripts/recall_eval/README.md): a stricter floor cuts more noise but also
# related memories people want (grade 1), and costs nDCG; these keep nDCG within 0.005 of no floor.
SEARCH_FLOOR = Floor(coverage=0.1, relative=0.06)
RELATED_FLOOR = Floor(coverage=0.1, relative=0.0)
NO_FLOOR = Floor(coverage=0.0, relative=0.0)


@dataclass(frozen=True)
class Hit:
    vpath: str
    title: str
    category: str
    workspace: str | None
    body: str  # capped body, for snippets and duplicate checks
    score: float  # higher is better
    mtime: float
    coverage: float = 1.0  # share of the query's weight it matched (1.0 for a hit found by meaning)
    doc_id: int = 0  # its row in the index (the semantic layer's vectors are keyed by it)


class Queries:
    def __init__(self, db: Database, vocab: Vocabulary) -> None:
        self.db = db
        self.vocab = vocab
        self._count_cache: tuple[int, float] | None = None

    def doc_frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        """How many memories contain each term (from the vocabulary snapshot)."""
        return self.vocab.frequencies(terms)

    def lexicon(self) -> Lexicon:
        """The vocabulary snapshot, to turn query words into terms."""
        df, terms = self.vocab.snapshot()
        lex = Lexicon(df, terms, self.vocab.count_of)
        lex.total = self._total()
        return lex

    def search(
        self,
        text: str,
        active: tuple[str, ...] | None,
        limit: int = 5,
        *,
        exclude: str | None = None,
        prefix_last: bool = False,
    ) -> list[Hit]:
        """A user's query or a user's turn to the agent: its content words (stop words dropped), each
        matching its other forms, its shorthand and, failing all, a one-typo fix. active None or () is
        the operator's unfiltered view; otherwise only global, legacy and active-workspace memories."""
        items = with_multiword(phrases(text, prefix_last=prefix_last), text)
        if not items:
            return []
        lex = self.lexicon()
        chat = not any(is_content(p) for p in items)
        terms = lex.terms(content_words(items), typos=not chat)
        if chat:
            # Nothing but stop words ("where", "thanks, that worked!"): searched for only as a whole,
            # every word in the memory, and no preference lifted by them.
            if any(t.df == 0 for t in terms):
                return []
            return self._ranked(terms, lex, active, limit, exclude, NO_FLOOR, boost=False, every=True)
        if prefix_last:
            # Still being typed (workspace symbols): a list to pick a memory from, up to 50 long,
            # refreshed at every keystroke. FTS5's order over the same terms, no re-scoring, no floor.
            return self._ranked(terms, lex, active, limit, exclude, NO_FLOOR, boost=True, rescore=False)
        return self._ranked(terms, lex, active, limit, exclude, SEARCH_FLOOR, boost=True)

    def is_chat(self, text: str) -> bool:
        """Whether a query has no content words ("thanks, that worked!"): left to the lexical list."""
        items = with_multiword(phrases(text), text)
        return not any(is_content(p) for p in items)

    def hits_by_id(self, ids: list[int]) -> dict[int, Hit]:
        """The memories of these index rows, as hits (for the ones found by meaning only)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        sql = (
            "SELECT d.id, d.vpath, d.title, d.category, d.workspace, d.mtime, f.body FROM docs d "
            f"JOIN fts f ON f.rowid = d.id WHERE d.id IN ({marks})"
        )
        rows: list[Any] = self.db.run(lambda c: c.execute(sql, ids).fetchall(), [])
        return {i: Hit(v, t, cat, ws, body, 0.0, mtime, 0.0, i) for i, v, t, cat, ws, mtime, body in rows}

    def doc_id(self, vpath: str) -> int | None:
        row = self.db.run(
            lambda c: c.execute("SELECT id FROM docs WHERE vpath = ?", (vpath,)).fetchone(), None
        )
        return None if row is None else int(row[0])

    def related(
        self,
        text: str,
        active: tuple[str, ...] | None,
        limit: int = 5,
        *,
        exclude: str | None = None,
        keep: int = MAX_RELATED_TERMS,
        rescore: bool = True,
    ) -> list[Hit]:
        """Memories related to a piece of text: its `keep` most distinctive words (rarest in the store;
        stop words and the very common ones dropped, which also keeps the query cheap at 100k memories)
        with their forms, ranked like a search, above RELATED_FLOOR: a hover may show nothing. Without
        rescore, FTS5's order and no floor: candidates for a caller that judges them itself."""
        lex = self.lexicon()
        picked = self.distinctive(text, keep, self_in_index=exclude is not None)
        terms = lex.terms(picked, shorthand=False, typos=False)
        floor = RELATED_FLOOR if rescore else NO_FLOOR
        return self._ranked(terms, lex, active, limit, exclude, floor, boost=False, rescore=rescore)

    def distinctive(
        self, text: str, keep: int = MAX_RELATED_TERMS, *, self_in_index: bool = False
    ) -> list[Phrase]:
        items = [p for p in phrases(text, limit=256) if len(p.text) > 1 and p.text not in STOP_WORDS]
        if not items:
            return []
        df = self.doc_frequencies(p.text for p in items)
        # Words only one memory has say nothing about others when that memory is the one asking
        # (a hover excludes itself): without this, a file of unique words relates to nothing.
        floor = 1 if self_in_index else 0
        present = [p for p in items if df.get(p.text, 0) > floor]
        if not present:
            return []
        total = max(self._total(), 1)
        cutoff = max(COMMON_SHARE * total, MIN_COMMON)
        rare = [p for p in present if df[p.text] <= cutoff]
        pool = sorted(rare or present, key=lambda p: (df[p.text], -len(p.text)))
        # The rarest words first, as many as keep the query's matches under BROAD (at least two):
        # a small store gets every word, a large one only those that are cheap and telling.
        chosen: list[Phrase] = []
        work = 0
        for p in pool:
            if len(chosen) >= keep or (len(chosen) >= 2 and work + df[p.text] > BROAD):
                break
            chosen.append(p)
            work += df[p.text]
        return chosen

    def _total(self) -> int:
        """How many memories are indexed, for the common-word cutoff: an estimate is enough, so it is
        cached for a few seconds (a full count of the FTS table costs milliseconds at 10k)."""
        now = time.monotonic()
        cached = self._count_cache
        if cached is None or now - cached[1] > COUNT_FRESH:
            count = int(self.db.run(_count_indexed, 0))
            self._count_cache = cached = (count, now)
        return cached[0]

    def _ranked(
        self,
        terms: list[Term],
        lex: Lexicon,
        active: tuple[str, ...] | None,
        limit: int,
        exclude: str | None,
        floor: Floor,
        *,
        boost: bool,
        rescore: bool = True,
        every: bool = False,
    ) -> list[Hit]:
        """The best memories for terms: FTS5 gathers the pool matching any alternative (with every,
        only memories matching all terms), scoring.score ranks it (BM25F per term, times coverage),
        the floor drops what is too weak, and with boost a preference passes a memory scoring up to
        PREFERENCE_TIE more (a near-tie, nothing else)."""
        if not terms or limit <= 0:
            return []
        cands = self._pool(terms, active, exclude, limit + RERANK_ROOM if rescore else limit, every)
        if not rescore or (len(terms) == 1 and len(terms[0].alts) == 1):
            # Asked not to, or one word with no other form: FTS5's bm25 is that ranking already and
            # every candidate covers the query; scoring again would only cost time.
            scored = [Scored(c, c.rank, 1.0) for c in cands]
        else:
            scored = score(cands, terms, lex)
        if not scored:
            return []
        best = max(s.relevance for s in scored)
        now = time.time()
        kept = [
            ((_with_preference(s.relevance, s.candidate, now) if boost else s.relevance), s)
            for s in scored
            if s.coverage >= floor.coverage and s.relevance >= floor.relative * best
        ]
        kept.sort(key=lambda pair: -pair[0])
        return [_hit(s.candidate, value, s.coverage) for value, s in kept[:limit]]

    def _pool(
        self,
        terms: list[Term],
        active: tuple[str, ...] | None,
        exclude: str | None,
        pool: int,
        every: bool = False,
    ) -> list[Candidate]:
        """The candidates: memories matching any alternative of any term. With several terms, those
        holding every term are asked first: when they fill the pool, they are what the ranking would
        keep anyway (they cover the whole query), found for a fraction of the cost of scoring every
        memory that holds any of the words (FTS5 scores each match before sorting)."""

        def ask(expr: str | None, estimate: int) -> list[Candidate]:
            return self._candidates(expr, active, exclude, pool, estimate)

        prefixed = any(a.prefix for t in terms for a in t.alts)  # a prefix can stand for any number of words
        found: list[Candidate] = []
        if every or _and_first(terms):
            found = ask(_every_term(terms), BROAD + 1 if prefixed else min(t.df for t in terms))
            if every or len(found) >= pool:
                return found
        estimate = BROAD + 1 if prefixed else sum(t.df for t in terms)
        pooled = ask(match_expr([a for t in terms for a in t.alts]), estimate)
        rare = _rare(terms) if estimate > BROAD else []
        if rare:
            # Ranked over the most recent matches only: the memories holding the query's rarer words
            # (an exact name, a number) are asked for on their own, so an old one is never lost to that
            # cut, and those holding every word (found above) stay in too.
            pooled = ask(match_expr([a for t in rare for a in t.alts]), sum(t.df for t in rare)) + pooled
        return _union(found, pooled)

    def _candidates(
        self, expr: str | None, active: tuple[str, ...] | None, exclude: str | None, pool: int, estimate: int
    ) -> list[Candidate]:
        """The pool best by bm25. A query matching more than BROAD memories (a very common word) is
        ranked over the BROAD most recently indexed of them: bm25 must score every match, which at 100k
        memories would cost far more than a keystroke's budget, and over so many matches the word says
        little anyway; recent memories are the better guess."""
        if expr is None:
            return []
        where, params = "", [expr]
        if active:
            where = f" AND d.scope IN ({','.join('?' * (len(active) + 1))})"
            params += [GLOBAL, *active]
        if exclude is not None:
            where += " AND d.vpath <> ?"
            params.append(exclude)
        rank = f"bm25(fts, {', '.join(map(str, WEIGHTS))})"
        cols = f"d.id, d.vpath, d.title, d.category, d.workspace, d.mtime, {rank} AS r"
        base = f"FROM fts f JOIN docs d ON d.id = f.rowid WHERE fts MATCH ?{where}"
        if estimate > BROAD:
            sql = f"SELECT * FROM (SELECT {cols} {base} ORDER BY f.rowid DESC LIMIT {BROAD}) ORDER BY r LIMIT {pool}"
        else:
            sql = f"SELECT {cols} {base} ORDER BY r LIMIT {pool}"

        def fn(c: sqlite3.Connection) -> list[Candidate]:
            rows = c.execute(sql, params).fetchall()
            # Bodies only for the pool: reading every match's body would cost more than ranking.
            ids = [row[0] for row in rows]
            marks = ",".join("?" * len(ids))
            bodies = dict(c.execute(f"SELECT rowid, body FROM fts WHERE rowid IN ({marks})", ids).fetchall())
            return [
                Candidate(rowid, v, t, cat, ws, bodies.get(rowid, ""), mtime, -r)
                for rowid, v, t, cat, ws, mtime, r in rows
            ]

        try:
            return self.db.run(fn, [])
        except sqlite3.OperationalError as exc:  # a locked database: recall is best-effort
            log.warning("recall query failed: %s", exc)
            return []


def _count_indexed(c: sqlite3.Connection) -> int:
    return int(c.execute("SELECT count(*) FROM docs WHERE category <> 'session'").fetchone()[0])


def _and_first(terms: list[Term]) -> bool:
    """Whether the memories holding every term are worth asking for first (see `_pool`)."""
    return 1 < len(terms) <= AND_FIRST_TERMS and min(t.df for t in terms) <= BROAD


def _every_term(terms: list[Term]) -> str:
    return " AND ".join("(" + " OR ".join(a.expr for a in t.alts) + ")" for t in terms)


def _rare(terms: list[Term]) -> list[Term]:
    """The query's rarer terms (no prefix, in at most BROAD memories) when some, not all, are rare."""
    rare = [t for t in terms if t.df <= BROAD and not any(a.prefix for a in t.alts)]
    return rare if len(rare) < len(terms) else []


def _union(first: list[Candidate], then: list[Candidate]) -> list[Candidate]:
    """Both pools, each memory once (as the first pool had it)."""
    out, seen = list(first), {c.rowid for c in first}
    for c in then:
        if c.rowid not in seen:
            seen.add(c.rowid)
            out.append(c)
    return out


def _hit(c: Candidate, value: float, coverage: float = 1.0) -> Hit:
    return Hit(c.vpath, c.title, c.category, c.workspace, c.body, value, c.mtime, coverage, c.rowid)


def _with_preference(relevance: float, cand: Candidate, now: float) -> float:
    """Preferences break near-ties, recent ones most: a preference is what the user wants honoured, but
    it never outranks a memory that matches the query clearly better."""
    if cand.category == "preference":
        age_days = max(0.0, (now - cand.mtime) / 86400.0)
        relevance *= 1.0 + PREFERENCE_TIE * math.pow(0.5, age_days / PREFERENCE_HALF_LIFE_DAYS)
    return relevance
