"""KM601 (near-duplicates) and KM604 (possible contradictions) for every memory of the store: recall
queries per memory over its rarest words, never a pairwise scan. The checks themselves are findings'
(findings/duplicates.py, findings/contradictions.py); the candidates come from the recall index."""

from __future__ import annotations

from ..findings import contradictions, duplicates
from ..findings.model import Finding
from ..store.context import Context
from ..store.store import Store
from ..store.workspace import visibility
from .service import Recall


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
