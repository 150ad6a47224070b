"""What a `/memories/…` reference in a memory's text is: the one rule the rename's relinking and the recall
index's list of each memory's references share, so a memory the index says names nothing is one the
relinking would leave as it is.

A reference is a whole path: `/memories/facts/a.mdx` is not a reference to `/memories/facts/a.md`, and a
sentence's final period is not part of the path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_REFERENCE = re.compile(r"/memories/[^\s)\]>\"'`<|,;]+")
_TRAILING = ".,:;!?"


def references_in(line: str) -> Iterator[tuple[int, str]]:
    """(column, path) of each reference in one line."""
    for m in _REFERENCE.finditer(line):
        yield m.start(), m.group(0).rstrip(_TRAILING)


def references(text: str) -> frozenset[str]:
    """Every path a text refers to (lines never matter: a reference never spans one)."""
    if "/memories/" not in text:
        return frozenset()
    return frozenset(m.group(0).rstrip(_TRAILING) for m in _REFERENCE.finditer(text))


def names(target: str, old: str) -> bool:
    """Whether a reference to `target` follows a rename of `old` (a file, or a folder and all below it)."""
    return target == old or target.startswith(old.rstrip("/") + "/")
