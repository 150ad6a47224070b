"""Consolidation candidates, without a model: what in the visible memories deserves a second look.

- `duplicate`: near-duplicates by the KM601 measure (word 3-shingle Jaccard ≥ 0.5), clustered
  transitively (a ~ b and b ~ c make one group a, b, c). KM601 asks recall for each open memory's
  candidates; over the whole store that is one query per memory (a minute at 10k memories), so here the
  candidates come from bottom-k sketches instead: each memory's SKETCH smallest shingle hashes, and two
  memories sharing one are compared exactly. A pair at Jaccard ≥ 0.5 shares one with probability about
  1 − 0.5^8 (≈ 0.996); hashes shared by more than COMMON memories are boilerplate and name no pair;
- `contradiction`: two memories about the same subject that disagree on a value (contradictions.py);
- `stale`: a project fact untouched past the stale threshold (KM400);
- `promote`: an expired episode whose text reads as durable (it states a port, a path, a rule…): a
  candidate to keep as a project fact before the sweep deletes it.

Pure over its inputs (the memories, whole, visible ones only), so the language server and the CLI share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..findings.claims import Claim, claims
from ..findings.conflicts import between
from ..recall.duplicates import THRESHOLD, jaccard, shingles
from ..store.categories import EPISODIC, PROJECT_FACT, SESSION
from ..store.lifecycle import Thresholds, lifecycle
from ..store.memory import Memory
from ..store.store import Store
from ..store.workspace import visibility
from ..wording import untouched

SKETCH = 8  # shingle hashes kept per memory
COMMON = 50  # a hash shared by more memories than this is boilerplate, not a duplicate
BUCKET_LIMIT = 200  # a subject word shared by more claims than this names nothing in particular
KIND_ORDER = {"contradiction": 0, "duplicate": 1, "promote": 2, "stale": 3}
_DURABLE = re.compile(
    r"\b(always|never|we use|is located|lives (?:in|at)|convention|runs on|listens on|the command|"
    r"must|is configured|is stored)\b",
    re.I,
)


Kind = Literal["duplicate", "contradiction", "stale", "promote"]


@dataclass(frozen=True)
class Candidate:
    kind: Kind
    paths: tuple[str, ...]
    reason: str


def candidates(
    memories: Iterable[Memory], now: float, thresholds: Thresholds | None = None
) -> list[Candidate]:
    """Every candidate group over these memories: contradictions first, then duplicates (largest group
    first), expired episodes to promote, stale facts; each group's paths in order."""
    t = thresholds or Thresholds()
    usable = [m for m in memories if not m.is_index and not m.read_error and m.category != SESSION]
    of = {m.vpath: claims(m.body) for m in usable}
    found = _contradictions(of) + _duplicates(usable)
    for m in usable:
        status = lifecycle(m.category, m.mtime, now, t).status
        age = untouched((now - m.mtime) / 86400)
        if m.category == PROJECT_FACT and status == "stale":
            found.append(Candidate("stale", (m.vpath,), f"project fact {age}: review it"))
        elif m.category == EPISODIC and status == "expired" and (of[m.vpath] or _DURABLE.search(m.body)):
            found.append(Candidate("promote", (m.vpath,),
                                   f"expired episode ({age}) that reads as durable: keep it as a project fact?"))  # fmt: skip
    return sorted(found, key=lambda c: (KIND_ORDER[c.kind], -len(c.paths), c.paths))


def _duplicates(memories: list[Memory]) -> list[Candidate]:
    body = {m.vpath: m.body for m in memories}
    buckets: dict[int, list[str]] = {}
    for m in memories:
        mine = shingles(m.body)
        if len(mine) < 2:  # a one-line memory is too short to call anything its duplicate (as KM601)
            continue
        for h in sorted({hash(s) for s in mine})[:SKETCH]:
            buckets.setdefault(h, []).append(m.vpath)
    cache: dict[str, frozenset[tuple[str, ...]]] = {}

    def of(vpath: str) -> frozenset[tuple[str, ...]]:
        if vpath not in cache:
            cache[vpath] = shingles(body[vpath])
        return cache[vpath]

    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    best: dict[frozenset[str], float] = {}
    for members in buckets.values():
        if len(members) < 2 or len(members) > COMMON:
            continue
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                pair = frozenset((a, b))
                if pair in best:
                    continue
                similarity = jaccard(of(a), of(b))
                if similarity >= THRESHOLD:
                    best[pair] = similarity
                    parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for path in list(parent):
        groups.setdefault(find(path), []).append(path)
    out = []
    for group in groups.values():
        if len(group) < 2:
            continue
        top = max((s for pair, s in best.items() if pair <= set(group)), default=0.0)
        out.append(Candidate("duplicate", tuple(sorted(group)),
                             f"{len(group)} memories say mostly the same thing (up to {top:.0%} shared wording): merge them"))  # fmt: skip
    return out


def _contradictions(of: dict[str, list[Claim]]) -> list[Candidate]:
    """Pairs compared only within a bucket (same attribute and a shared subject word, or the same rule):
    never the whole store against itself."""
    buckets: dict[tuple[str, str], set[str]] = {}
    for vpath, found in of.items():
        for c in found:
            # A rule's words qualify it ("on release branches"): a general rule meets its narrower ones
            # in one bucket per rule.
            for word in ({""} if c.attribute.startswith("rule:") else c.subject) or {""}:
                buckets.setdefault((c.attribute, word), set()).add(vpath)
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


def survey(
    store: Store, active: tuple[str, ...], now: float, thresholds: Thresholds | None = None
) -> list[Candidate]:
    """The candidates over a loaded store as the active workspaces see it (empty: the operator's view)."""
    visible = [
        whole
        for m in store.memories()
        if visibility(m.stamp, active).visible and (whole := store.get(m.vpath)) is not None
    ]
    return candidates(visible, now, thresholds)
