"""Bulk fixes as one reviewable proposal: the safe quick fixes of the whole store, or a new workspace
stamp for every memory of a moved repository. Nothing is written here: the proposal is applied like a
model pass's, exactly as shown, through the tool's guard, each file checked for changes first.

Safe fixes are those with one right answer: fences around a bare frontmatter (KM100), a missing closing
fence (KM101), a category that differs only in case or quoting (KM202), and a typo'd category with one
clear suggestion (KM201 with a preferred fix). Each is computed from the file's bytes on disk, so what is
shown is what a file holds now (an editor's unsaved buffer is not the file).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path

from ..findings.edits import apply_edits, yaml_scalar
from ..findings.model import TextEdit
from ..findings.run import check_memory
from ..store.context import Context
from ..store.memory import MAX_READ_BYTES, Memory, from_text
from ..store.paths import INDEX_VPATH, real_path
from ..store.reader import Refused, read_file
from ..store.store import scan
from . import store as proposals
from .model import Proposal, ProposedChange, proposed

SAFE_CODES = frozenset({"KM100", "KM101", "KM202", "KM201"})
_EOL = re.compile(r"\r\n|\r|\n")


def safe_edits(memory: Memory, ctx: Context) -> list[TextEdit]:
    """The edits of this memory's safe fixes (the preferred fix of each safe finding)."""
    edits: list[TextEdit] = []
    for finding in check_memory(memory, ctx):
        if finding.code not in SAFE_CODES:
            continue
        preferred = next((f for f in finding.fixes if f.preferred and f.edits), None)
        if preferred is not None and not any(_overlap(e, mine) for e in edits for mine in preferred.edits):
            edits += preferred.edits
    return edits


def _overlap(a: TextEdit, b: TextEdit) -> bool:
    a0, a1 = (a.span.line, a.span.col), (a.span.end_line, a.span.end_col)
    b0, b1 = (b.span.line, b.span.col), (b.span.end_line, b.span.end_col)
    return a0 < b1 and b0 < a1 or a0 == b0


def _disk(root: Path, vpath: str) -> tuple[bytes, Memory] | None:
    """The file's bytes and the memory they make; None when unreadable or not UTF-8 (not fixed here)."""
    path = real_path(root, vpath)
    try:
        got = read_file(path, MAX_READ_BYTES, within=root)
        text = got.data.decode("utf-8")
    except (Refused, OSError, UnicodeDecodeError):
        return None
    return got.data, from_text(path, vpath, text, got.st.st_mtime, len(got.data))


def _candidates(root: Path, vpaths: Iterable[str] | None) -> list[str]:
    if vpaths is not None:
        return sorted(set(vpaths))
    return [vpath for _path, vpath, is_index in scan(root)[0] if not is_index]


def _proposal(summary: str, changes: list[ProposedChange]) -> Proposal:
    # No workspace: a bulk fix is the operator's, over every memory it names (a moved repository's
    # memories are invisible from any workspace by definition).
    return Proposal(id=proposals.new_id(), source="fix", summary=summary, created=time.time(), workspace=None,
                    changes=tuple(changes))  # fmt: skip


def fix_all(root: Path, ctx: Context, vpaths: Iterable[str] | None = None) -> Proposal:
    """One proposal with every safe fix of these memories (all of the store when None), saved for review."""
    changes: list[ProposedChange] = []
    for vpath in _candidates(root, vpaths):
        if vpath == INDEX_VPATH:
            continue
        got = _disk(root, vpath)
        if got is None:
            continue
        data, memory = got
        edits = safe_edits(memory, ctx)
        after = apply_edits(memory.text, edits).encode("utf-8") if edits else data
        if after != data:
            changes.append(proposed("edit", vpath, data, after))
    n = len(changes)
    proposal = _proposal(
        f"Safe fixes for {n} {'memory' if n == 1 else 'memories'}: fences and categories.", changes
    )
    if changes:
        proposals.save(root, proposal)
    return proposal


def restamp(root: Path, old: str, new: str, vpaths: Iterable[str] | None = None) -> Proposal:
    """One proposal giving every memory stamped `old` the stamp `new` (`global` makes them global)."""
    changes: list[ProposedChange] = []
    for vpath in _candidates(root, vpaths):
        got = _disk(root, vpath)
        if got is None:
            continue
        data, memory = got
        entry = memory.frontmatter.get("workspace") if memory.frontmatter.status == "ok" else None
        if entry is None or memory.stamp != old:
            continue
        after = apply_edits(memory.text, [TextEdit(entry.value_span, yaml_scalar(new))]).encode("utf-8")
        if after != data:
            changes.append(proposed("edit", vpath, data, after))
    n = len(changes)
    these = f"{n} {'memory' if n == 1 else 'memories'} stamped {old}"
    summary = f"Make {these} global." if new == "global" else f"Re-stamp {these} with {new}."
    proposal = _proposal(summary, changes)
    if changes:
        proposals.save(root, proposal)
    return proposal
