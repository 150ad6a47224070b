"""The four categories and the read-time fallback (the write-time rule is tool/write_rules.py)."""

from __future__ import annotations

from functools import lru_cache

PROJECT_FACT = "project-fact"
PREFERENCE = "preference"
EPISODIC = "episodic"
SESSION = "session"
CATEGORIES = (PROJECT_FACT, PREFERENCE, EPISODIC, SESSION)

DESCRIPTIONS = {
    PROJECT_FACT: "durable facts about a project or system; never deleted, flagged stale after {stale} days untouched",
    PREFERENCE: "how the user likes things done; never deleted, recency-weighted in recall so it is not outranked",
    EPISODIC: "what happened (outcomes, incidents); swept {episodic} days after the last touch",
    SESSION: "scratch for the current session; never indexed, swept {session} hours after the last touch",
}


def normalize(value: str) -> str:
    return value.strip().strip("\"'").strip().lower()


def effective_category(raw: object) -> str:
    """Read-time fallback: anything but an exact valid value reads as project-fact (never swept)."""
    return raw if isinstance(raw, str) and raw in CATEGORIES else PROJECT_FACT


def closest(value: str) -> str | None:
    """Did-you-mean: the valid category nearest by edit distance, when it is plausibly a typo. Memoized
    for short values: a store repeats its few misspellings (a whole-store check asked difflib again for
    each of its files), and a long one is no typo worth keeping."""
    return _closest(value) if len(value) <= MEMO_LENGTH else _nearest(value)


MEMO_LENGTH = 64  # characters of the values whose answer is kept (at most 1,024 of them)


@lru_cache(maxsize=1024)
def _closest(value: str) -> str | None:
    return _nearest(value)


def _nearest(value: str) -> str | None:
    import difflib

    matches = difflib.get_close_matches(normalize(value), CATEGORIES, n=1, cutoff=0.5)
    return matches[0] if matches else None
