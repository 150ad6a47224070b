"""Links that follow a renamed or moved memory: MEMORY.md's links to it and `/memories/…` references to it
in other memories, rewritten to the new path. Pure text in, edits out; the tool and the language server
decide where the text comes from and how the edits are written.

A folder moves everything below it: `/memories/facts` → `/memories/kb` rewrites `/memories/facts/a.md`
too. What a reference is: store/references.py.
"""

from __future__ import annotations

from pathlib import Path

from ..store.frontmatter import Span, split_lines
from ..store.memory import from_text
from ..store.paths import rel_of_virtual
from ..store.references import names, references_in
from .budget import link_targets
from .model import TextEdit


def moved(vpath: str, old: str, new: str) -> str | None:
    """Where `vpath` is after `old` became `new` (a file, or a folder and everything in it); None when
    the rename does not concern it."""
    if not names(vpath, old):
        return None
    return new if vpath == old else new.rstrip("/") + vpath[len(old.rstrip("/")) :]


def mentions(text: str, old: str) -> bool:
    """A cheap first look: whether the text could refer to `old` at all."""
    return old in text or rel_of_virtual(old) in text


def _link_edits(vpath: str, text: str, old: str, new: str) -> list[TextEdit]:
    index = from_text(Path(vpath), vpath, text, 0.0, len(text), is_index=True)
    edits = []
    for line, start, end, target in link_targets(index):
        to = moved(target, old, new) if target else None
        if to is None:
            continue
        raw = index.lines[line][start:end]
        fragment = raw[raw.index("#") :] if "#" in raw else ""
        shown = to if raw.startswith("/memories/") else rel_of_virtual(to)
        edits.append(TextEdit(Span(line, start, line, end), shown + fragment))
    return edits


def _reference_edits(lines: list[str], old: str, new: str, taken: set[tuple[int, int]]) -> list[TextEdit]:
    edits = []
    for n, line in enumerate(lines):
        for col, path in references_in(line):
            to = moved(path, old, new)
            if to is None or (n, col) in taken:
                continue
            edits.append(TextEdit(Span(n, col, n, col + len(path)), to))
    return edits


def relink(vpath: str, text: str, old: str, new: str, *, is_index: bool) -> list[TextEdit]:
    """The edits that make this file's links and references follow `old` → `new`."""
    if not mentions(text, old):
        return []
    links = _link_edits(vpath, text, old, new) if is_index else []
    taken = {(e.span.line, e.span.col) for e in links}
    return links + _reference_edits(split_lines(text), old, new, taken)
