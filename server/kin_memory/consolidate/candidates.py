"""Consolidation candidates, without a model: what in the visible memories deserves a second look.

- `duplicate`: near-duplicates by the KM601 measure (word 3-shingle Jaccard ≥ 0.5 over recall
  candidates), clustered transitively (a ~ b and b ~ c make one group a, b, c);
- `contradiction`: two memories about the same subject that disagree on a value (contradictions.py);
- `stale`: a project fact untouched past the stale threshold (KM400);
- `promote`: an expired episode whose text reads as durable (it states a port, a path, a rule…): a
  candidate to keep as a project fact before the sweep deletes it.

Pure over its inputs: the caller passes the memories (whole, visible ones only) and a way to find one's
near-duplicates (the recall index), so the language server and the CLI share it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..recall.duplicates import Duplicate
from ..store.categories import EPISODIC, PROJECT_FACT, SESSION
from ..store.lifecycle import Thresholds, lifecycle
from ..store.memory import Memory
from ..store.store import Store
from ..store.workspace import visibility
from .claims import Claim, claims
from .contradictions import between

if TYPE_CHECKING:  # recall is passed in by the caller
    from ..recall.service import Recall

BUCKET_LIMIT = 200  # a subject word shared by more claims than this names nothing in particular
KIND_ORDER = {"contradiction": 0, "duplicate": 1, "promote": 2, "stale": 3}
_DURABLE = re.compile(
    r"\b(always|never|we use|is located|lives (?:in|at)|convention|runs on|listens on|the command|"
    r"must|is configured|is stored)\b",
    re.I,
)


@dataclass(frozen=True)
class Candidate:
    kind: str  # duplicate | contradiction | stale | promote
    paths: tuple[str, ...]
    reason: str


DuplicatesOf = Callable[[Memory], list[Duplicate]]


def candidates(memories: Iterable[Memory], duplicates_of: DuplicatesOf, now: float,
               thresholds: Thresholds | None = None) -> list[Candidate]:  # fmt: skip
    """Every candidate group over these memories: contradictions first, then duplicates (largest group
    first), expired episodes to promote, stale facts; each group's paths in order."""
    t = thresholds or Thresholds()
    usable = [m for m in memories if not m.is_index and not m.read_error and m.category != SESSION]
    by_path = {m.vpath: m for m in usable}
    found = _contradictions(usable) + _duplicates(usable, by_path, duplicates_of)
    for m in usable:
        status = lifecycle(m.category, m.mtime, now, t).status
        age = int((now - m.mtime) // 86400)
        if m.category == PROJECT_FACT and status == "stale":
            found.append(Candidate("stale", (m.vpath,), f"project fact untouched for {age} days: review it"))
        elif m.category == EPISODIC and status == "expired" and _durable(m):
            found.append(Candidate("promote", (m.vpath,),
                                   f"expired episode ({age} days) that reads as durable: keep it as a project fact?"))  # fmt: skip
    return sorted(found, key=lambda c: (KIND_ORDER[c.kind], -len(c.paths), c.paths))


def _durable(memory: Memory) -> bool:
    return bool(_DURABLE.search(memory.body)) or bool(claims(memory.body))


def _duplicates(
    memories: list[Memory], by_path: dict[str, Memory], duplicates_of: DuplicatesOf
) -> list[Candidate]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    best: dict[frozenset[str], float] = {}
    for m in memories:
        for d in duplicates_of(m):
            if d.vpath in by_path and d.vpath != m.vpath:
                parent[find(m.vpath)] = find(d.vpath)
                best[frozenset((m.vpath, d.vpath))] = d.similarity
    groups: dict[str, list[str]] = {}
    for path in list(parent):
        groups.setdefault(find(path), []).append(path)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        top = max((s for pair, s in best.items() if pair <= set(members)), default=0.0)
        out.append(Candidate("duplicate", tuple(sorted(members)),
                             f"{len(members)} memories say mostly the same thing (up to {top:.0%} shared wording): merge them"))  # fmt: skip
    return out


def _contradictions(memories: list[Memory]) -> list[Candidate]:
    """Pairs compared only within a bucket (same attribute and a shared subject word, or the same rule):
    never the whole store against itself."""
    of: dict[str, list[Claim]] = {}
    buckets: dict[tuple[str, str], set[str]] = {}
    for m in memories:
        found = claims(m.body)
        if not found:
            continue
        of[m.vpath] = found
        for c in found:
            for word in c.subject or {""}:
                buckets.setdefault((c.attribute, word), set()).add(m.vpath)
    seen: set[tuple[str, str]] = set()
    out = []
    for members in buckets.values():
        if len(members) < 2 or len(members) > BUCKET_LIMIT:
            continue
        ordered = sorted(members)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                if (a, b) in seen:
                    continue
                seen.add((a, b))
                pair = between(of[a], of[b])
                if pair is not None:
                    out.append(Candidate("contradiction", (a, b), f"{a} and {b} disagree: {pair.reason}"))
    return out


def survey(store: Store, recall: Recall | None, active: tuple[str, ...], now: float,
           thresholds: Thresholds | None = None) -> list[Candidate]:  # fmt: skip
    """The candidates over a loaded store as the active workspaces see it (empty: the operator's view).
    Without recall (unavailable) there are no duplicate groups; the other kinds need no index."""
    visible = [
        whole
        for m in store.memories()
        if visibility(m.stamp, active).visible and (whole := store.get(m.vpath)) is not None
    ]

    def duplicates_of(memory: Memory) -> list[Duplicate]:
        return recall.duplicates_of(memory, active or None) if recall is not None else []

    return candidates(visible, duplicates_of, now, thresholds)
