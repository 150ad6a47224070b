"""Segment snapshots: a segment whose snapshot still holds is sent as kept; new snapshots are made from the entries a check writes; the recall index is compared segment by segment."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....store.freshness import Seen
from ....store.paths import HIDDEN_DIR

if TYPE_CHECKING:  # the workers import no more than they need before the fork
    from ....caches.checked import Checked
    from ....caches.segments import Snapshot


from .outbox import _Lister, _Outbox
from .records import ShardResult
from .spill import _Spill

log = logging.getLogger("kin_memory.lsp")


def _from_snapshots(
    root: Path,
    by_segment: dict[int, list[tuple[str, str]]], listings: dict[int, list[tuple[str, int]]],
    cache, variant: str, now: float, result: ShardResult, outbox: _Outbox, abandon,
    said: Callable[[RecallSaid], None] | None = None,
) -> tuple[list[tuple[str, str]], dict[int, list[str]], set[int]] | None:  # fmt: skip
    """Send the segments whose snapshot still holds (their listing added to `result`): (the files left
    to check one by one, segment by segment, and the vpaths of each segment to get a new snapshot);
    None when abandoned. The recall index is compared with every segment first, and `said` told."""
    kept = cache.segments(variant, by_segment) if cache is not None else {}
    digests = _compare_recall(root, by_segment, listings, result, abandon, said)
    if digests is None:
        return None
    plan = _Plan([], {}, set())
    for seg, seg_files in sorted(by_segment.items()):
        if abandon is not None and abandon():
            return None
        listing = listings.get(seg, [])
        snap = kept.get(seg)
        if snap is not None and _answers_whole(
            snap, listing, digests[seg], now, cache.probes, result, outbox
        ):
            continue
        if snap is not None and _answers_partly(snap, seg_files, listing, digests[seg], now, cache.probes,
                                                result, outbox, plan):  # fmt: skip
            continue
        plan.rest += seg_files
        plan.redo[seg] = [vpath for vpath, *_ in listing]
    return plan.rest, plan.redo, plan.aged_only


@dataclass
class _Plan:
    """What `_from_snapshots` leaves to do: the files to check one by one, the vpaths of each segment to
    get a new snapshot, the segments answered by their snapshot but made again for their aged files."""

    rest: list[tuple[str, str]]
    redo: dict[int, list[str]]
    aged_only: set[int]


def _compare_recall(
    root: Path, by_segment: dict[int, list[tuple[str, str]]], listings: dict[int, list[tuple[str, int]]],
    result: ShardResult, abandon, said: Callable[[RecallSaid], None] | None,
) -> dict[int, bytes] | None:  # fmt: skip
    """Each segment's listing digest, with the recall index compared to every segment on the way (told
    to `said` before any file is sent); None when abandoned."""
    from ....caches.segments import listing_digest

    lag = _RecallLag(root)
    digests: dict[int, bytes] = {}
    for seg in sorted(by_segment):
        if abandon is not None and abandon():
            lag.lag.close()
            return None
        listing = listings.get(seg, [])
        digests[seg] = digest = listing_digest(listing)
        lag.add(seg, listing, digest)
    result.recall = lag.said()
    if said is not None:
        said(lag.told(result.recall, sum(len(f) for f in by_segment.values())))
    return digests


def _answers_partly(
    snap: Snapshot, seg_files: list[tuple[str, str]], listing: list[tuple[str, int]], digest: bytes, now: float,
    memo: dict[str, str], result: ShardResult, outbox: _Outbox, plan: _Plan,
) -> bool:  # fmt: skip
    """Send a segment whose snapshot holds but some of whose files aged, less those files (added to
    `plan.rest`, checked again); False when the snapshot cannot answer (too many aged, parts not whole)."""
    from ....caches.segments import HIDDEN

    usable = _usable(snap, listing, digest, now, memo)
    if usable is None:
        return False
    index, lines = usable
    aged = {e[0] for e in index if not e[1] > now}
    frames = _without(snap.frames, [(e[2], e[3]) for e in index if e[0] in aged])
    if len(aged) * AGED_SHARE > len(index) or _whole_frames(frames) is None:
        return False
    result.listed += [(vpath, line) for vpath, line in lines if vpath not in aged]
    result.hidden += sum(1 for e in index if e[5] == HIDDEN and e[0] not in aged)
    result.hits += len(index) - len(aged)
    uris = "\0".join([e[4] for e in index if e[4] and e[0] not in aged])
    outbox.segment([x[0] for x in listing if x[0] not in aged], uris, frames, snap, aged)
    # Checked again; the snapshot is made again only once a fair share has aged (each start checks
    # those few again, from their own entries, until then).
    plan.rest += [(path, vpath) for path, vpath in seg_files if vpath in aged]
    if len(aged) * REMAKE_SHARE > len(index):
        plan.redo[snap.seg] = [vpath for vpath, *_ in listing]
        plan.aged_only.add(snap.seg)
    return True


RECALL_KEEP = 500  # changed files a worker names (a start writes up to this many itself)


# How a worker's files compare with the recall index, told to the server before any file is sent:
# ((matched, changed, the first changed vpaths), the segments whose seal matched (the index holds
# exactly their files), every other segment of the worker's with files: its vpaths joined by NUL, and
# how many files the worker has); None when the index could not be read.
RecallSaid = tuple[tuple[int, int, list[str]], list[int], dict[int, str], int] | None


class _RecallLag:
    """The recall index compared with a shard's files, segment by segment: a sealed segment whose
    digest matches costs nothing, the others are looked up row by row (recall/peek.py)."""

    def __init__(self, root: Path) -> None:
        from ....recall.peek import Lag

        self.lag = Lag(root, keep=RECALL_KEEP)
        self.seals = self.lag.sealed()
        self.sealed: list[int] = []  # segments matched by their seal
        self.compared: dict[int, str] = {}  # the others: their vpaths, joined by NUL

    def add(self, seg: int, listing: list[tuple[str, int]], digest: bytes) -> None:
        if self.lag.conn is not None and self.seals.get(seg) == digest:
            self.sealed.append(seg)
        else:
            self.compared[seg] = "\0".join(vpath for vpath, _ in listing)
        self.lag.add_segment(listing, digest, self.seals, seg)

    def told(self, said: tuple[int, int, list[str]] | None, files: int) -> RecallSaid:
        return None if said is None else (said, self.sealed, self.compared, files)

    def said(self) -> tuple[int, int, list[str]] | None:
        """(matched, changed, the first changed vpaths); None when the index could not be read."""
        lag = self.lag
        if lag.conn is None:
            return None
        lag.close()
        return lag.matched, lag.changed, lag.changed_vpaths


AGED_SHARE = 4  # a segment with more than a quarter of its files aged is checked again whole


REMAKE_SHARE = 16  # a segment's snapshot is made again once more than a sixteenth of its files aged


SNAPSHOTS_HELD = 4 << 20  # bytes of made snapshots a worker holds before writing them


def _answers_whole(
    snap: Snapshot, listing: list[tuple[str, int]], digest: bytes, now: float, memo: dict[str, str],
    result: ShardResult, outbox: _Outbox,
) -> bool:  # fmt: skip
    """Send a segment whose snapshot holds for every one of its files (none has aged: the earliest
    `valid_until` is still ahead) as it is, from the snapshot's own URIs and counts: the per-file index
    is not even decoded (a warm start of a big store does this for nearly every segment)."""
    if not (snap.valid_until > now and _holds(snap, listing, digest, now, memo)):
        return False
    try:
        lines = json.loads(snap.listed)
    except (ValueError, RecursionError):
        return False
    uris = snap.uris.count("\0") + 1 if snap.uris else 0
    if not (_lines_whole(lines) and _whole_frames(snap.frames) == uris and 0 <= snap.hidden <= snap.count):
        return False
    result.listed += [(vpath, line) for vpath, line in lines]
    result.hidden += snap.hidden
    result.hits += snap.count
    outbox.segment([vpath for vpath, _ in listing], snap.uris, snap.frames, snap, set())
    return True


def _holds(
    snap: Snapshot, listing: list[tuple[str, int]], digest: bytes, now: float, memo: dict[str, str]
) -> bool:
    """Whether the snapshot is of these files as they are: the same files unchanged, the clock not
    before it, every path stamp probing the same on disk."""
    from ....caches.findings import stamp_probe

    if not (snap.since <= now and snap.count == len(listing) and snap.listing == digest):
        return False
    return all(stamp_probe(stamp, memo) == probe for stamp, probe in snap.probes)


def _lines_whole(lines: object) -> bool:
    return isinstance(lines, list) and all(
        isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], str) for x in lines
    )


def _usable(
    snap: Snapshot, listing: list[tuple[str, int]], digest: bytes, now: float, memo: dict[str, str]
) -> tuple[list[list], list[tuple[str, str]]] | None:
    """(the snapshot's files, its listing lines) when it still answers for the segment: the same files
    unchanged, the clock not before it, every path stamp probing the same on disk, its parts whole."""
    if not _holds(snap, listing, digest, now, memo):
        return None
    try:
        index, lines = json.loads(snap.files), json.loads(snap.listed)
    except (ValueError, RecursionError):
        return None
    if not (isinstance(index, list) and len(index) == snap.count and _ranges_whole(index, len(snap.frames))):
        return None
    if not _lines_whole(lines):
        return None
    return index, [(vpath, line) for vpath, line in lines]


def _ranges_whole(index: list, size: int) -> bool:
    """Whether the files' entries are [vpath, until, start, end, uri, kind] with frame ranges that
    follow each other from 0 to `size`."""
    at = 0
    for e in index:
        if not (
            isinstance(e, list) and len(e) == 6 and isinstance(e[0], str) and isinstance(e[1], (int, float))
            and isinstance(e[2], int) and isinstance(e[3], int) and isinstance(e[4], str)
            and isinstance(e[5], str) and e[2] == at and e[3] >= at
        ):  # fmt: skip
            return False
        at = e[3]
    return at == size


def _without(blob: bytes, cuts: list[tuple[int, int]]) -> bytes:
    """`blob` less the byte ranges `cuts` (in order, not overlapping)."""
    if not cuts:
        return blob
    parts, at = [], 0
    for start, end in cuts:
        parts.append(blob[at:start])
        at = end
    parts.append(blob[at:])
    return b"".join(parts)


def _whole_frames(blob: bytes) -> int | None:
    """How many complete `Content-Length` framed messages `blob` is made of; None when it is anything
    else."""
    head = b"Content-Length: "
    pos, end, count = 0, len(blob), 0
    while pos < end:
        if not blob.startswith(head, pos):
            return None
        stop = blob.find(b"\r\n\r\n", pos)
        digits = blob[pos + len(head) : stop] if stop > 0 else b""
        if not digits.isdigit():
            return None
        pos = stop + 4 + int(digits)
        if pos > end:
            return None
        count += 1
    return count


def _is_path(stamp: object) -> bool:
    return isinstance(stamp, str) and stamp.startswith(("/", "~"))


def _add_fresh(
    b, vpaths: list[str], fresh: dict[str, Any], seen: dict[str, tuple[str | None, str, str | None]],
    stats: dict[str, Seen], uri_of: Callable[[str], str],
) -> None:  # fmt: skip
    """A segment's files into its snapshot, from the entries its check just made."""
    for vpath in vpaths:
        e, (line, kind, stamp) = fresh[vpath], seen[vpath]
        b.add(vpath, *stats[vpath], e.record, e.valid_until, e.payload,
              uri_of(vpath) if e.payload else "", line, kind)  # fmt: skip
        if stamp is not None:
            b.probes[stamp] = e.probe


class _SnapshotSink:
    """The entries of a worker's check as they are made, for the segment snapshots of the next start.
    They wait for the answer (`finish`, in the write-back): making and writing the snapshots of a big
    shard costs a fifth of its check, and the editor waits for none of it. What waits is held by a
    _Spill: a few thousand entries in memory, the rest in a scratch file beside the findings cache (at
    100k, 50 MB of entries per worker). When no scratch file can be made, a segment whose files all
    have their entries becomes its snapshot at once, written 4 MB at a time (the files come segment by
    segment: one segment's entries are held, not the whole shard's)."""

    def __init__(
        self, cache, variant: str, redo: dict[int, list[str]], stats: dict[str, Seen],
        now: float, seen: dict[str, tuple[str | None, str, str | None]], uri_of: Callable[[str], str],
        keep: bool,
    ) -> None:  # fmt: skip
        from ....caches.findings import Entry, record_text, stamp_probe
        from ....caches.segments import segment_of

        self.cache, self.variant, self.redo, self.stats = cache, variant, redo, stats
        self.now, self.seen, self.uri_of = now, seen, uri_of
        # Called once per file: looked up once here (an import in a function costs a lookup per call).
        self.segment_of, self.stamp_probe, self.entry, self.record_text = (
            segment_of,
            stamp_probe,
            Entry._make,
            record_text,
        )
        self.kept: list[Any] | None = [] if keep else None  # entries for the per-file write-back
        self.deferred = _Spill(cache.root / HIDDEN_DIR) if cache is not None else None  # for `finish`
        self.fresh: dict[int, dict[str, Any]] = {}
        self.done: set[int] = set()
        self.snapshots: list[Snapshot] = []
        self.held = 0

    def add(self, entry: Any) -> None:
        if self.kept is not None:
            self.kept.append(entry)
        seg = self.segment_of(entry.vpath)
        if seg in self.redo:  # what the file's reading noted for its snapshot waits with its entry
            self._wait(seg, tuple(entry), self.seen.pop(entry.vpath, None))

    def checked(self, c: Checked, noted: tuple[str | None, str, str | None]) -> None:
        """A file of a first check (nothing kept: the findings cache was not asked), its entry made after
        the answer from what its check found: its record's JSON waits too. The probe of its path stamp
        is taken now, as the check saw it (memoized: a store has a few stamps)."""
        if c.record is None:  # an odd file (unreadable, unusual values): no entry, as check_files makes none
            self.seen[c.vpath] = noted
            return
        probe = self.stamp_probe(c.record[2], self.cache.probes)
        fields = (c.vpath, c.mtime, c.size, c.key, self.now, c.until, probe, c.record, c.payload)
        self._wait(self.segment_of(c.vpath), fields, noted)

    def _wait(self, seg: int, fields: tuple, noted: tuple[str | None, str, str | None] | None) -> None:
        """An entry's fields (its record, or already its JSON) until `finish`; taken now when no scratch
        file can be made (and what waited with it)."""
        deferred = self.deferred
        if deferred is not None:
            if deferred.add((seg, fields, noted)):
                return
            self.deferred = None  # no scratch file: what waited is taken now, and the rest as it comes
            self._replay(deferred)
        self._made_entry(seg, fields, noted)

    def _replay(self, deferred: _Spill) -> None:
        for seg, fields, noted in deferred.taken():
            self._made_entry(seg, fields, noted)

    def _made_entry(self, seg: int, fields: tuple, noted: tuple[str | None, str, str | None] | None) -> None:
        vpath, record = fields[0], fields[7]
        if noted is not None:
            self.seen[vpath] = noted
        if not isinstance(record, str):
            text = self.record_text(record)
            if text is None:  # not plain values: no entry (the segment then gets no snapshot)
                return
            fields = (*fields[:7], text, fields[8])
        self._take(seg, self.entry(fields))

    def _take(self, seg: int, entry: Any) -> None:
        vpaths = self.redo[seg]
        fresh = self.fresh.setdefault(seg, {})
        fresh[entry.vpath] = entry
        if len(fresh) == len(vpaths) and all(v in self.seen for v in vpaths):
            self._made(seg, vpaths, self.fresh.pop(seg))

    def _made(self, seg: int, vpaths: list[str], fresh: dict[str, Any]) -> None:
        from ....caches.segments import SnapshotBuilder

        b = SnapshotBuilder()
        _add_fresh(b, vpaths, fresh, self.seen, self.stats, self.uri_of)
        snap = b.snapshot(seg, self.now)
        if snap is None or snap.count != len(vpaths):
            self.fresh[seg] = fresh  # left to `finish`, which drops the segment's old snapshot
            return
        for vpath in vpaths:
            self.seen.pop(vpath, None)
        self.done.add(seg)
        self.snapshots.append(snap)
        self.held += len(snap.frames) + len(snap.records) + len(snap.files)
        if self.held > SNAPSHOTS_HELD:
            self.write()

    def write(self) -> None:
        if self.snapshots:
            self.cache.put_segments(self.variant, self.snapshots, [])
        self.snapshots, self.held = [], 0

    def finish(self, lister: _Lister, aged_only: set[int]) -> None:
        """The rest: the snapshots made and not written, then the segments not made as their files came
        (a file without an entry, a segment only partly checked again), as before."""
        deferred, self.deferred = self.deferred, None
        if deferred is not None:
            self._replay(deferred)
        self.write()
        rest = {seg: vpaths for seg, vpaths in self.redo.items() if seg not in self.done}
        if rest:
            fresh = {v: e for entries in self.fresh.values() for v, e in entries.items()}
            _keep_snapshots(self.cache, self.variant, rest, self.stats, self.now, lister, self.uri_of, fresh,
                            self.seen, aged_only)  # fmt: skip


def _keep_snapshots(
    cache, variant: str, redo: dict[int, list[str]], stats: dict[str, Seen], now: float,
    lister: _Lister, uri_of: Callable[[str], str], fresh: dict[str, Any] | None = None,
    seen: dict[str, tuple[str | None, str, str | None]] | None = None, aged_only: set[int] | None = None,
) -> None:  # fmt: skip
    """After the write-back of the files' entries: a snapshot for each segment checked file by file,
    made from the entries just written (`fresh`, with what `seen` noted of each file) or read back from
    the cache. A segment with a file neither holds gets none: its old snapshot is dropped, unless only
    some of its files aged (it still answers for the others; those are checked again each time until
    their share asks for the whole segment to be checked again)."""
    from ....caches.findings import record_text, stamp_probe
    from ....caches.segments import SnapshotBuilder, listing_kind

    fresh, seen = fresh or {}, seen or {}
    snapshots: list[Snapshot] = []
    stale: list[int] = []
    held = 0
    for seg, vpaths in redo.items():
        b = SnapshotBuilder()
        if vpaths and all(v in fresh and v in seen for v in vpaths):
            _add_fresh(b, vpaths, fresh, seen, stats, uri_of)
        else:
            found: dict[str, tuple[Any, bytes, float]] = {}
            for hits, _ in cache.lookup_batches(variant, stats, now, only=vpaths):
                found.update(hits)
            if len(found) != len(vpaths) or not vpaths:
                if seg not in (aged_only or ()):
                    stale.append(seg)
                continue
            for vpath in vpaths:
                record, payload, until = found[vpath]
                category, stamp, title = record[0], record[2], record[9]
                line = lister.line(vpath, category, stamp, title)
                text = record_text(record)
                if text is None:
                    break
                b.add(vpath, *stats[vpath], text, until, payload, uri_of(vpath) if payload else "", line,
                      listing_kind(line, category))  # fmt: skip
                if _is_path(stamp):
                    b.probes[stamp] = stamp_probe(stamp, cache.probes)
        snap = b.snapshot(seg, now)
        if snap is None or snap.count != len(vpaths):
            stale.append(seg)
            continue
        snapshots.append(snap)
        held += len(snap.frames) + len(snap.records) + len(snap.files)
        if held > SNAPSHOTS_HELD:  # written as they are made: a big shard's would add up to tens of MB
            cache.put_segments(variant, snapshots, stale)
            snapshots, stale, held = [], [], 0
    cache.put_segments(variant, snapshots, stale)
