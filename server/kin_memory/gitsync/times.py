"""`Kin-Time`: a file's age as another machine's commit tells it, checked before it is believed.

A memory's age is its file's mtime (stale facts, expiring episodes, the sweep), which git does not keep,
so each commit names the mtime of each file it adds or changes, and a file brought in takes that time
back. The trailer is written by whoever made the commit, so it is input like any other: a value that is
no number (or not a finite one) is ignored with a log line, and a number is kept inside the window the
commit's history can explain, with a log line when it had to be moved:

- never later than now, nor later than the commit that carries it (an mtime is read before its commit);
- never before EARLIEST. A file's age may rightly predate every commit that holds it (a store kept for
  years before its first sync, a file copied with its time, `touch -d`), so its history explains no
  later floor than the oldest a memory can be.
"""

from __future__ import annotations

import json
import logging
import math

log = logging.getLogger("kin_memory.gitsync")

TRAILER = "Kin-Time"
EARLIEST = 946_684_800.0  # 2000-01-01 UTC
SLACK = 1.0  # seconds: a commit's time is whole seconds, cut from the moment just after the mtime was read
VALUE_LIMIT = 64  # characters of a time worth parsing ("1e300", "32503680000.000")


def line(rel: str, mtime: float) -> str:
    return f"{TRAILER}: {mtime:.3f} {json.dumps(rel)}"


def parse(values: str, commit: str) -> dict[str, float]:
    """The Kin-Time trailers of one commit, by path, as numbers (not yet checked against a window)."""
    out: dict[str, float] = {}
    for value in values.split("\x1d"):
        stamp, _, quoted = value.strip().partition(" ")
        if not stamp:
            continue
        try:
            rel = json.loads(quoted)
        except (ValueError, RecursionError):
            log.warning("ignored a %s trailer of commit %s: it names no path", TRAILER, commit[:12])
            continue
        if not isinstance(rel, str):
            continue
        try:
            when = float(stamp) if len(stamp) <= VALUE_LIMIT else math.nan
        except ValueError:
            when = math.nan
        if not math.isfinite(when):
            log.warning("ignored the %s of %s in commit %s: not a finite number", TRAILER, rel, commit[:12])
            continue
        out[rel] = when
    return out


def bounded(rel: str, when: float, low: float, high: float, commit: str) -> float | None:
    """`when` moved into [low, high]; None when the window itself is empty (the commit's times lie)."""
    if low > high:
        log.warning("ignored the %s of %s in commit %s: its commit's times contradict each other",
                    TRAILER, rel, commit[:12])  # fmt: skip
        return None
    kept = min(max(when, low), high)
    if kept != when:
        log.warning("moved the %s of %s in commit %s from %r into %.0f..%.0f", TRAILER, rel, commit[:12],
                    when, low, high)  # fmt: skip
    return kept
