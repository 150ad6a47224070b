"""The recall index's seals: per segment of the store's files, the digest of what the index holds of it.

A seal is `listing_digest` over the (vpath, freshness key) rows `docs` holds of a segment, the digest a
start makes of the same segment's files on disk: a segment whose seal matches needs no look at its rows
(recall/peek.py reads the seals; the start-up workers compare). Any write to a segment drops its seal in
the same transaction, and the writer seals what lost its seal after a batch of writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from .segments import SEGMENTS, listing_digest, segment_of


def unseal(c: sqlite3.Connection, vpaths: Iterable[str]) -> None:
    """Within a write transaction: the segments of these files are about to change."""
    c.executemany("DELETE FROM seal WHERE seg = ?", ((seg,) for seg in {segment_of(v) for v in vpaths}))


def seal_missing(c: sqlite3.Connection) -> int:
    """Within a write transaction: seal every segment that has no seal, in one pass over `docs`. How
    many were sealed."""
    have = {seg for (seg,) in c.execute("SELECT seg FROM seal")}
    if len(have) >= SEGMENTS:
        return 0
    parts: dict[int, list[tuple[str, int]]] = {s: [] for s in range(SEGMENTS) if s not in have}
    for vpath, key in c.execute("SELECT vpath, key FROM docs"):
        part = parts.get(segment_of(vpath))
        if part is not None:
            part.append((vpath, key))
    c.executemany("INSERT INTO seal VALUES (?, ?)", ((s, listing_digest(p)) for s, p in parts.items()))
    return len(parts)
