"""What recall knows about words: which say nothing about a memory, developer shorthand, word forms.

A user turn is a person talking to a coding agent ("can you remind me which port pgbouncer listens
on?"), not a keyword list. The words that only carry the conversation are dropped before matching
(STOP_WORDS), shorthand is matched together with what it stands for (SHORTHAND), and a word matches its
other forms in the index (stem: experiments/experiment, reverted/revert, scheduling/schedule).

The lists were tuned on the labeled set in scripts/recall_eval (user turns to a coding agent); every
entry is a general rule about how people talk to an agent or write developer notes, none is there for
one turn. Keep them small: a word on the stop list can never be searched for inside a longer query.
"""

from __future__ import annotations

from functools import lru_cache

# Function words (articles, pronouns, auxiliaries, prepositions, conjunctions), the pieces contractions
# split into ("what's" → what + s, "can't" → can + t), and the words of talking to an agent: asking
# ("how do I", "can you", "remind me", "is there"), politeness and chat ("thanks", "ok", "hmm", "good
# morning"), and vague verbs and nouns that stand for the task rather than name it ("do", "get",
# "thing", "work"). Question words are here too: "where"/"which"/"why" say what kind of answer is
# wanted, never which memory holds it.
STOP_WORDS = frozenset(
    """
    a about above actually after again against ago all almost already also am an and another any
    anybody anyone anything anyway anywhere are around as ask asked asking at away

    back be became because become been before being below besides between both but by

    came can cannot come comes coming could couldn

    d did didn do does doesn doing don done during

    each either else elsewhere enough etc even ever every everybody everyone everything exactly
    explain

    few first for from further

    gave get gets getting give given go goes going gone good got gotten great guess

    had hadn has hasn have haven having he hello help her here hers herself hey hi him himself his hmm
    how however

    i if in into is isn it its itself

    just

    keep keeps kind knew know knows

    let lets like ll look looks lot

    m many may maybe me might mine more morning most much must my myself

    need needed needs never next no nope nor not nothing now

    of off often oh ok okay on once only onto or other others otherwise our ours ourselves out over
    own

    please pretty probably put

    quite

    rather re really recent recently remember remind right

    s said same saw say says see seem seems seen shall she should shouldn show since so some somebody someone
    something sometimes somewhere soon still stuff such suppose sure

    t tell than thank thanks that the their theirs them themselves then there these they thing things
    think this those though thought through thx to today told too tomorrow tried tries try trying

    uh um under until up upon us use used uses using

    ve very via

    want wanted wants was wasn way we well went were weren what whatever when whenever where wherever
    whether which while who whoever whom whose why will with within without won work worked working
    works would wouldn

    yeah yes yet you your yours yourself yourselves
    """.split()
)

# Developer shorthand and what it stands for. A query word in one of these sets also matches the
# others, as alternatives of the same word: "db" finds a note about "the staging database", "k8s" one
# about "kubernetes". Multi-word entries match as a phrase ("pull request").
_EQUIVALENT: tuple[tuple[str, ...], ...] = (
    ("db", "database", "databases"),
    ("postgres", "postgresql", "psql"),
    ("k8s", "kubernetes", "kube"),
    ("pr", "prs", "pull request", "pull requests"),
    ("mr", "merge request"),
    ("repo", "repos", "repository", "repositories"),
    ("env", "envs", "environment", "environments"),
    ("prod", "production"),
    ("staging", "stg"),
    ("dev", "development"),
    ("config", "configs", "configuration", "cfg", "conf"),
    ("auth", "authentication", "authn"),
    ("authz", "authorization"),
    ("ci", "continuous integration"),
    ("deps", "dependencies"),
    ("dep", "dependency"),
    ("pkg", "package"),
    ("lib", "library"),
    ("libs", "libraries"),
    ("var", "variable"),
    ("vars", "variables"),
    ("docs", "documentation"),
    ("perf", "performance"),
    ("infra", "infrastructure"),
    ("js", "javascript"),
    ("ts", "typescript"),
    ("py", "python"),
    ("tf", "terraform"),
    ("gh", "github"),
    ("creds", "credentials"),
    ("msg", "message"),
    ("e2e", "end to end"),
    ("oom", "out of memory"),
    ("venv", "virtualenv"),
    ("tz", "timezone", "time zone"),
)

# One way only: a shorthand for which a more specific word is what notes usually say ("the db" is
# the project's Postgres; "k8s" notes are full of kubectl), while a note that says "postgres" is not
# necessarily what a query for "database" is after.
_NARROWER: dict[str, tuple[str, ...]] = {
    "db": ("postgres", "postgresql"),
    "database": ("postgres", "postgresql"),
    "k8s": ("kubectl",),
    "kubernetes": ("kubectl",),
}


def _shorthand() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for group in _EQUIVALENT:
        for word in group:
            table.setdefault(word, []).extend(w for w in group if w != word)
    for word, narrower in _NARROWER.items():
        table.setdefault(word, []).extend(narrower)
    return {w: tuple(dict.fromkeys(alts)) for w, alts in table.items()}


SHORTHAND: dict[str, tuple[str, ...]] = _shorthand()
# The entries of more than one word ("pull request"): a query holding them matches them as one term.
MULTIWORD = frozenset(w for w in SHORTHAND if " " in w)
MULTIWORD_MAX = max(len(w.split()) for w in MULTIWORD)

_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=8192)  # the same vocabulary words are stemmed query after query
def stem(word: str, *, derived: bool = True) -> str:
    """The form a word shares with its inflections, for matching them to each other: a light suffix
    strip (plurals, -ed, -ing, a final e; with derived, also -ment and -tion/-sion), never for display.
    Two words with the same stem are treated as one word. Short words and words with digits (k8s,
    fp16) are kept whole."""
    if len(word) <= 3 or not word.isalpha():
        return word
    w = _plural(word)
    w = _tense(w)
    if derived:
        w = _derived(w)
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]  # name/names/naming, schedule/scheduling
    return w


def _plural(w: str) -> str:
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"  # retries → retry
    if w.endswith(("sses", "ches", "shes", "xes", "zes")):
        return w[:-2]  # processes, batches, pushes, indexes, sizes
    if w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        return w[:-1]
    return w


def _tense(w: str) -> str:
    if w.endswith("ied") and len(w) > 4:
        return w[:-3] + "y"  # retried → retry
    for suffix in ("ing", "ed"):
        base = w[: -len(suffix)]
        if w.endswith(suffix) and len(base) >= 3 and _VOWELS.intersection(base):
            if base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running → run, stopped → stop (called, passed keep theirs)
            return base
    return w


def _derived(w: str) -> str:
    for suffix in ("ment", "ion"):
        base = w[: -len(suffix)]
        if w.endswith(suffix) and len(base) >= 4 and (suffix == "ment" or base[-1] in "ts"):
            return base  # deployment → deploy, connection → connect, migration → migrat(e)
    return w
