"""From the words of a query to the terms recall matches: each word with its alternatives.

A query word matches, as alternatives of one term: itself, its other forms the index holds (same stem:
experiments/experiment), the shorthand it is or stands for (db/database/postgres), and, when it matches
nothing at all, the one index word a single typo away from it (postgress → postgres). Everything is
looked up in a snapshot of the index vocabulary (term → how many memories hold it), so building a query
costs dictionary look-ups and a short slice of the sorted vocabulary, never a scan of it.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .query import Phrase, normalize, phrases, tokens
from .words import MULTIWORD, MULTIWORD_MAX, SHORTHAND, STOP_WORDS, stem

MAX_FORMS = 8  # other forms of one word: enough for plural, tenses, -ment/-tion
FORM_SCAN = 256  # vocabulary words read while looking for them (a short stem like "run" has many)
SCAN_BUDGET = 4096  # and for all the words of one query: a long one must stay cheap too
TYPO_MIN_CHARS = 5  # a shorter word is one edit away from too many others to guess which was meant
TYPO_MAX_CHARS = 24
TYPO_MIN_DF = 2  # the fix must be a word of the store, not another memory's typo
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True)
class Term:
    word: str  # the query word (after a typo fix, the fixed word)
    alts: tuple[Phrase, ...]  # what matches it; the word itself first
    df: int  # memories holding any alternative (the sum: an upper bound)


def is_content(p: Phrase) -> bool:
    """Whether a word says which memory is wanted: not a stop word nor a single letter. A word still
    being typed (a prefix) always counts: what it will be is not known yet."""
    return p.prefix or (len(p.text) > 1 and p.text not in STOP_WORDS)


def content_words(items: Sequence[Phrase]) -> list[Phrase]:
    """The content words of a query; all its words when it has none (someone searching for "where"
    means it)."""
    return [p for p in items if is_content(p)] or list(items)


def with_multiword(items: list[Phrase], text: str) -> list[Phrase]:
    """items with the shorthand entries of several words that text spells out ("pull request",
    "out of memory") as one word each, in place of the words they are made of: so that "pull
    request" also finds "PR", and a memory saying "PR" matches the whole of it."""
    seq = tokens(normalize(text))
    found: list[str] = []
    i = 0
    while i < len(seq):
        for k in range(min(MULTIWORD_MAX, len(seq) - i), 1, -1):
            entry = " ".join(seq[i : i + k])
            if entry in MULTIWORD:
                found.append(entry)
                i += k
                break
        else:
            i += 1
    if not found:
        return items
    parts = {w for entry in found for w in entry.split()}
    return [p for p in items if p.prefix or p.text not in parts] + [Phrase(e) for e in dict.fromkeys(found)]


def content_text(text: str) -> str:
    """The content words of text, for placing a snippet on what was asked rather than on "the"."""
    return " ".join(p.text for p in content_words(phrases(text, limit=32)))


class Lexicon:
    """The index vocabulary as of a snapshot: `df` maps term → memories, `sorted_terms` is its keys in
    order; `df_of` answers terms the snapshot lacks (written since). The snapshot is refreshed a while
    after writes (RecallIndex.doc_frequencies): until then a new word is found as itself, though not
    yet as another word's form or typo fix."""

    def __init__(self, df: dict[str, int], sorted_terms: Sequence[str], df_of: Callable[[str], int]) -> None:
        self.df = df
        self.sorted_terms = sorted_terms
        self._df_of = df_of
        self.total = 0  # memories indexed, set by the index for weighting
        self.budget = SCAN_BUDGET  # vocabulary words this lexicon may still read looking for forms

    def count(self, term: str) -> int:
        """Memories holding term; a phrase ("pull request") counts as its rarest word."""
        if " " in term:
            return min(self.count(w) for w in term.split())
        n = self.df.get(term)
        if not n:
            # Written since the snapshot, or in no memory yet: asked every time (a memory written a
            # moment ago must be found by its words, never "fixed" away as a typo), kept once found.
            n = self._df_of(term)
            if n:
                self.df[term] = n
        return n

    def forms(self, word: str, *, derived: bool = True) -> list[str]:
        """Vocabulary words with the same stem as word (word itself included when indexed); derived
        False keeps to inflections (plural, tense): what a shorthand stands for is one exact word."""
        key = stem(word, derived=derived)
        # Every form starts with the stem, but for a y that became "ie" (retry/retries): one letter less.
        start = key[:-1] if key.endswith("y") and len(key) > 3 else key
        out = [word] if self.count(word) else []
        first = i = bisect_left(self.sorted_terms, start)
        end = min(len(self.sorted_terms), i + min(FORM_SCAN, self.budget))
        while i < end and self.sorted_terms[i].startswith(start) and len(out) < MAX_FORMS:
            term = self.sorted_terms[i]
            if term != word and stem(term, derived=derived) == key:
                out.append(term)
            i += 1
        self.budget -= i - first
        return out

    def typo_fix(self, word: str) -> str | None:
        """The store's word one edit (insertion, deletion, substitution, swap of neighbours) away from
        word, for a word that matches nothing: the most common such word, if it is in ≥ TYPO_MIN_DF
        memories. Only plain lowercase ASCII words of TYPO_MIN_CHARS or more are corrected."""
        if not TYPO_MIN_CHARS <= len(word) <= TYPO_MAX_CHARS or not (word.isascii() and word.isalnum()):
            return None
        best: tuple[int, str] | None = None
        for cand in _one_edit(word):
            n = self.df.get(cand, 0)
            if n >= TYPO_MIN_DF and cand not in STOP_WORDS and (best is None or (n, cand) > best):
                best = (n, cand)
        return best[1] if best else None

    def terms(self, items: Iterable[Phrase], *, shorthand: bool = True, typos: bool = True) -> list[Term]:
        out: list[Term] = []
        seen: set[str] = set()
        for p in items:
            if p.prefix:  # a word still being typed: its forms are not known yet
                out.append(Term(p.text, (p,), self.count(p.text)))
                continue
            word = p.text
            forms = self.forms(word)
            if not forms and typos:
                fixed = self.typo_fix(word)
                if fixed is not None:
                    word, forms = fixed, self.forms(fixed)
            if word in seen:
                continue
            seen.add(word)
            alts = dict.fromkeys([word, *forms])
            if shorthand:
                for short in SHORTHAND.get(word, ()):
                    # only what the store holds: an alternative no memory has only lengthens the query
                    if " " in short:
                        alts.update(dict.fromkeys([short] if self.count(short) else []))
                    else:
                        alts.update(dict.fromkeys(self.forms(short, derived=False)))
            phrases = tuple(Phrase(a) for a in alts)
            out.append(Term(word, phrases, sum(self.count(a) for a in alts)))
        return out

    def idf(self, term: Term) -> float:
        """bm25's inverse document frequency of a term over the store (always positive)."""
        n = max(self.total, term.df, 1)
        df = min(term.df, n)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def _one_edit(word: str) -> Iterable[str]:
    """Every string one edit away from word (a few hundred for a typical word)."""
    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        if tail:
            yield head + tail[1:]  # deletion
            if len(tail) > 1:
                yield head + tail[1] + tail[0] + tail[2:]  # swap of neighbours
        for c in _ALPHABET:
            yield head + c + tail  # insertion
            if tail and c != tail[0]:
                yield head + c + tail[1:]  # substitution
