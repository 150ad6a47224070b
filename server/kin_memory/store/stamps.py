"""What a `workspace` stamp is, read from its text alone: a path, a label, `global`, or one that can never
be matched safely. Below workspace.py and the mapping of other machines' paths (workspace_aliases.py),
which both ask it."""

from __future__ import annotations

from ..sinks.controls import HOSTILE

GLOBAL = "global"
MAX_STAMP_BYTES = 4096


def looks_like_path(value: str) -> bool:
    """A stamp naming a folder: absolute, `~`-relative or relative (only absolute realpaths ever match)."""
    return value.startswith(("/", "~", ".")) or "/" in value


def unsafe_stamp(stamp: str) -> str | None:
    """Why a string stamp can never be matched safely (KM304), in words; None when it can. Control,
    invisible and bidirectional characters make a stamp read as another one; a label with leading,
    trailing or repeated spaces is one the agent's frontmatter reader collapses, so it never matches."""
    if len(stamp.encode("utf-8", "surrogatepass")) > MAX_STAMP_BYTES:
        return "is over 4096 bytes"
    if any("\ud800" <= ch <= "\udfff" for ch in stamp):
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
    if not isinstance(stamp, str) or unsafe_stamp(stamp):
        return "invalid"
    if stamp == GLOBAL:
        return "global"
    if looks_like_path(stamp):
        return "path"
    return "label"
