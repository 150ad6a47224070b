"""Findings about the store as a whole rather than one memory's text.

KM601 (near-duplicates) and KM604 (possible contradictions), through the recall index,, KM700/KM701 (the settings files) and KM900 (entries the
scan could not use). `kin-memory check` and the language server both call these.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..store.context import Context
from ..store.frontmatter import Span
from ..store.store import ScanProblem, Store
from ..store.workspace import visibility
from . import contradictions, duplicates
from .model import Finding
from .settings_files import settings_findings as settings_findings  # re-exported
from .settings_files import settings_problem_finding as settings_problem_finding

if TYPE_CHECKING:  # recall is imported by the caller only when duplicates are wanted
    from ..recall.service import Recall


def scan_findings(problems: Iterable[ScanProblem]) -> dict[str, list[Finding]]:
    """KM900 for each entry the scan skipped (a folder named x.md, a link out of the store, …)."""
    out: dict[str, list[Finding]] = {}
    for problem in problems:
        out.setdefault(problem.vpath, []).append(Finding("KM900", Span(0, 0, 0, 0), problem.reason))
    return out


def duplicate_findings(store: Store, ctx: Context, recall: Recall) -> dict[str, list[Finding]]:
    """KM601 and KM604 for every memory: recall queries per memory over its rarest words, never a pairwise
    scan."""
    out: dict[str, list[Finding]] = {}
    for listed in store.memories():
        memory = store.get(listed.vpath) if listed.compact else listed  # its words, not just its listing
        if memory is None:
            continue
        found = duplicates.check(memory, recall.duplicates_of(memory, ctx.active))
        if visibility(memory.stamp, ctx.active).visible:  # another workspace's memory is judged in its own
            found += contradictions.check(memory, recall.neighbour_bodies(memory, ctx.active))
        if found:
            out[memory.vpath] = found
    return out
