"""What a `workspace` stamp is, read from its text alone: a path, a label, `global`, or one that can never
be matched safely. Below workspace.py and the mapping of other machines' paths (workspace_aliases.py),
which both ask it."""

from __future__ import annotations

import functools
import re

from ..sinks.controls import HOSTILE

GLOBAL = "global"
MAX_STAMP_BYTES = 4096
_SURROGATE = re.compile("[\ud800-\udfff]")
# Stamps repeat across a store (a few repositories, thousands of memories): the kind of a short one is
# remembered. A long one (only a hostile or broken stamp is) is classified afresh each time, so the
# memo holds at most MEMO_STAMPS short strings.
MEMO_STAMPS = 1024
MEMO_STAMP_CHARS = 256


def looks_like_path(value: str) -> bool:
    """A stamp naming a folder: absolute, `~`-relative or relative (only absolute realpaths ever match)."""
    return value.startswith(("/", "~", ".")) or "/" in value


def unsafe_stamp(stamp: str) -> str | None:
    """Why a string stamp can never be matched safely (KM304), in words; None when it can. Control,
    invisible and bidirectional characters make a stamp read as another one; a label with leading,
    trailing or repeated spaces is one the agent's frontmatter reader collapses, so it never matches."""
    if len(stamp.encode("utf-8", "surrogatepass")) > MAX_STAMP_BYTES:
        return "is over 4096 bytes"
    if _SURROGATE.search(stamp):
        return "is not valid UTF-8"
    if HOSTILE.search(stamp):
        return "contains control, invisible or bidirectional characters"
    if not looks_like_path(stamp) and stamp != " ".join(stamp.split()):
        return "has leading, trailing or repeated spaces, which the agent's reader collapses"
    return None


def stamp_kind(stamp: object) -> str:
    """Classify a raw `workspace` value: absent, global, path, label or invalid."""
    if stamp is None:
        return "absent"
    if not isinstance(stamp, str):
        return "invalid"
    return _memo_kind(stamp) if len(stamp) <= MEMO_STAMP_CHARS else _kind(stamp)


@functools.lru_cache(maxsize=MEMO_STAMPS)
def _memo_kind(stamp: str) -> str:
    return _kind(stamp)


def _kind(stamp: str) -> str:
    if unsafe_stamp(stamp):
        return "invalid"
    if stamp == GLOBAL:
        return "global"
    if looks_like_path(stamp):
        return "path"
    return "label"
