"""Why a ranking missed: word-level evidence for the failure causes of one case.

Heuristics for reading the results, never used to rank. A cause is named when the evidence for it is in
the words: e.g. "no stemming" when the answer holds a different form of a query word and not the word
itself. The word lists here describe the labeled set's turns; they are not a proposal for the product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .dataset import Case, LabeledSet
from .systems import words

# Words of how people talk to an agent that say nothing about which memory is wanted.
CONVERSATIONAL = frozenset(
    """
    a about after again am an and any anything are as at be been being but by can can't could did do does
    don done else every for from get getting go goes going got had has have here how i i'm if in is it
    it's just keep keeps know let like me my need no not now of off ok on one or our out please put really
    remind s say says should so some something t tell than that the their them then there these they this
    to up us use used want was we what what's when where which who why will with would you your
    """.split()
)
# Developer shorthand → the words a memory spells it out with.
SHORTHAND = {
    "db": ("database", "postgres", "clickhouse", "mysql"),
    "k8s": ("kubernetes", "kubectl"),
    "pr": ("pull", "request"),
    "prod": ("production",),
    "env": ("environment",),
    "vars": ("variables",),
    "venv": ("virtualenv",),
    "js": ("javascript",),
    "deps": ("dependencies", "dependency", "wheels"),
    "repo": ("repository",),
    "e2e": ("end", "playwright"),
}
_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ers", "er", "ies", "ied", "es", "ed", "s", "y")


@dataclass(frozen=True)
class Finding:
    cause: str
    detail: str


def stem(word: str) -> str:
    """A crude suffix strip, enough to say two words are forms of one another."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word  # name/names, schedule/scheduling


def one_edit_apart(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in CONVERSATIONAL}


def diagnose(case: Case, ranked: Sequence[str], labeled: LabeledSet) -> list[Finding]:
    """The causes visible in the words for a case whose answer is missing or outranked."""
    query = words(case.query)
    content = {w for w in query if w not in CONVERSATIONAL}
    answers = [m for m, g in case.relevant.items() if g == 2]
    first_answer = next((i for i, r in enumerate(ranked) if r in answers), len(ranked))
    findings = _above_answer(case, ranked[:first_answer], query, content, labeled)
    vocabulary: set[str] = set()
    for m in labeled.recallable(case.workspace, case.memory):
        vocabulary |= words(m.content)
    for answer in answers:
        if answer in ranked[: len(answers)]:  # where it belongs: nothing outranks it
            continue
        findings += _answer_gaps(answer, content, vocabulary, labeled)
    return findings


def _above_answer(
    case: Case, above: Sequence[str], query: set[str], content: set[str], labeled: LabeledSet
) -> list[Finding]:
    out = []
    for rid in above:
        if case.relevant.get(rid, 0) > 0:
            continue
        memory = labeled.memories.get(rid)
        if memory is None:
            out.append(Finding("unknown result", rid))
            continue
        shared = query & words(memory.content)
        shared_content = shared & content
        if memory.effective_category == "preference" and not shared_content:
            # An unrelated preference: only the preference weighting can have put it there.
            out.append(Finding("preference lifted", f"{rid} shares only {sorted(shared) or 'nothing'}"))
        elif not shared_content:
            out.append(Finding("conversational words", f"{rid} shares only {sorted(shared) or 'nothing'}"))
        elif len(shared_content) == 1:
            out.append(Finding("weak match", f"{rid} shares one content word {sorted(shared_content)}"))
    return out


def _answer_gaps(answer: str, content: set[str], vocabulary: set[str], labeled: LabeledSet) -> list[Finding]:
    have = words(labeled.memories[answer].content)
    out = []
    if not content & have:
        out.append(Finding("paraphrase", f"{answer} shares no content word with the turn"))
    for w in sorted(content - have):
        forms = sorted(h for h in have if h != w and stem(h) == stem(w) and len(stem(w)) >= 3)
        if forms:
            out.append(Finding("no stemming", f"{w!r} vs {forms} in {answer}"))
        near = sorted(h for h in have if len(w) >= 5 and one_edit_apart(w, h))
        if near and not forms and w not in vocabulary:
            out.append(Finding("no typo tolerance", f"{w!r} vs {near} in {answer}"))
        spelled = [s for s in SHORTHAND.get(w, ()) if s in have]
        if spelled:
            out.append(Finding("shorthand", f"{w!r} vs {spelled} in {answer}"))
    return out
