"""A worker's check: segments answered by their snapshots, the rest through the findings cache a file at a time."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ....store.freshness import Seen

if TYPE_CHECKING:  # the workers import no more than they need before the fork
    from ....caches.checked import CachedCheck, Checked


from .channel import Chunks
from .outbox import _Lister, _Outbox, _renderer
from .records import ShardResult
from .snapshots import RecallSaid, _from_snapshots, _is_path, _SnapshotSink

log = logging.getLogger("kin_memory.lsp")


def _check(
    root: Path,
    files: list[tuple[str, str, int]],
    ctx,
    encoding: str,
    shard: tuple[int, int],
    cache,
    abandon=None,
    stream: Callable[[tuple[str, object]], bool] | None = None,
    said: Callable[[RecallSaid], None] | None = None,
) -> tuple[ShardResult, Chunks, Callable[[], None]] | None:
    """Check this worker's files: segments whose snapshot still holds are sent as kept, the others go
    through the findings cache a file at a time and get a new snapshot afterwards. Sent back: framed
    diagnostics, the listing and each file's compact record, never the files' text (each memory is
    dropped once listed). `said` hears how the recall index compares, before any file is sent."""
    from ....caches.checked import check_files
    from ....caches.findings import variant_key

    render, uri_of = _renderer(root, encoding)
    variant = variant_key(ctx, f"lsp-{encoding}")
    outbox = _Outbox(stream, variant)
    result = ShardResult([], [], 0)
    lister = _Lister(ctx.active)
    stats: dict[str, Seen] = {}
    if fresh := _nothing_kept(root, cache, variant):  # what a stat says of each file comes with its reading
        answered: tuple | None = _all_to_check(files, said)
    else:
        by_segment, stats, listings = _stat_files(files)
        answered = _from_snapshots(root, by_segment, listings, cache, variant, ctx.now, result, outbox, abandon,
                                   said)  # fmt: skip
    if answered is None:
        return None
    # `rest` comes segment by segment, a segment's files together: see _SnapshotSink.
    rest, redo, aged_only = answered
    each = _Each(result, outbox, lister, {vpath for vpaths in redo.values() for vpath in vpaths},
                 stats if fresh else None)  # fmt: skip
    # A cold start keeps its segments' snapshots only (a segment that changes later is read again whole,
    # and gets per-file entries, as the CLI keeps them, from then on).
    sink = _SnapshotSink(cache, variant, redo, stats, ctx.now, each.seen, uri_of, keep=result.hits > 0)
    # Nothing kept: the cache has nothing to answer with, and each file's entry is made from what _Each
    # hands the sink, after the answer (check_files would make it, its record's JSON included, at once).
    asked = None if fresh else cache
    each.sink = sink if fresh and cache is not None else None
    checked = check_files(
        rest, ctx, f"lsp-{encoding}", render, asked, shard=shard, abandon=abandon, each=each,
        all_files=len(rest) == len(files), stats=stats, entries=sink.add if asked is not None else None,
    )  # fmt: skip
    if checked is None:
        return None
    result.hits += checked.hits
    return result, outbox.chunks, partial(_write_back, cache, sink, checked, ctx.now, lister, aged_only)


def _write_back(cache, sink: _SnapshotSink, checked: CachedCheck, now: float, lister: _Lister,
                aged_only: set[int]) -> None:  # fmt: skip
    """After the answer: the per-file entries of a warm start's files checked one by one, then the
    segment snapshots of every segment checked again."""
    if cache is None:
        return
    if sink.kept is not None:  # entries for the files checked one by one
        checked.pending, sink.kept = sink.kept, None
        checked.write_back(cache, now)
        checked.pending = []
    if sink.redo:
        sink.finish(lister, aged_only)


def _nothing_kept(root: Path, cache, variant: str) -> bool:
    """Whether neither the findings cache (for this variant) nor the recall index holds anything: a
    first start, where a stat of every file before reading it (for the comparisons) would be spent
    for nothing."""
    from ....recall.peek import index_usable

    return cache is not None and not cache.holds_any(variant) and not index_usable(root)


def _all_to_check(
    files: list[tuple[str, str, int]], said: Callable[[RecallSaid], None] | None = None
) -> tuple[list[tuple[str, str]], dict[int, list[str]], set[int]]:
    """What `_from_snapshots` answers when nothing is kept: every file to check, segment by segment,
    and every segment to get its snapshot (of the files read; see _Each). There is no recall index to
    compare with: `said` is told so."""
    if said is not None:
        said(None)
    by_segment: dict[int, list[tuple[str, str]]] = {}
    for path, vpath, seg in files:
        by_segment.setdefault(seg, []).append((path, vpath))
    rest: list[tuple[str, str]] = []
    redo: dict[int, list[str]] = {}
    for seg, seg_files in sorted(by_segment.items()):
        rest += seg_files
        redo[seg] = [vpath for _, vpath in seg_files]
    return rest, redo, set()


def _stat_files(
    files: list[tuple[str, str, int]],
) -> tuple[dict[int, list[tuple[str, str]]], dict[str, Seen], dict[int, list[tuple[str, int]]]]:
    """(the files of each segment, what a stat says of each file, each segment's listing of its files'
    (vpath, freshness key)): one pass, a stat per file and nothing more (a warm start of a big store does
    little else). A file that cannot be stat'ed is in its segment but not in its listing."""
    from ....store.freshness import seen_of

    by_segment: dict[int, list[tuple[str, str]]] = {}
    stats: dict[str, Seen] = {}
    listings: dict[int, list[tuple[str, int]]] = {}
    stat = os.stat
    last = None
    # The files come segment by segment (the kept listing keeps them so): a segment's lists are looked up
    # when it changes, not for every file (any order is still right).
    for path, vpath, seg in files:
        if seg != last:
            last = seg
            seg_files = by_segment.setdefault(seg, [])
            seg_listing = listings.setdefault(seg, [])
        seg_files.append((path, vpath))
        try:
            seen = seen_of(stat(path))
        except OSError:
            continue
        stats[vpath] = seen
        seg_listing.append((vpath, seen[2]))
    return by_segment, stats, listings


class _Each:
    """What a worker does with each file checked one by one: its listing line, what its segment's new
    snapshot will need, and the file itself into the outbox."""

    def __init__(self, result: ShardResult, outbox: _Outbox, lister: _Lister, remade: set[str],
                 stats: dict[str, Seen] | None = None) -> None:  # fmt: skip
        """`stats`: filled with what each file's reading saw, when the files were not stat'ed."""
        from ....caches.segments import listing_kind

        self.result, self.outbox, self.lister, self.remade = result, outbox, lister, remade
        self.stats = stats
        self.kind = listing_kind
        self.seen: dict[str, tuple[str | None, str, str | None]] = {}  # vpath -> (line, kind, path stamp)
        self.sink: _SnapshotSink | None = None  # given each file of a first check (see _check)

    def __call__(self, c: Checked) -> None:
        # The listing from the record: no memory is made for a file the cache answered.
        record = c.record
        if record is None:
            category, stamp, title = c.memory.category, c.memory.stamp, c.memory.title
        else:
            category, stamp, title = record[0], record[2], record[9]
        line = self.lister.line(c.vpath, category, stamp, title)
        if line is not None:
            self.result.listed.append((c.vpath, line))
        elif category != "session":
            self.result.hidden += 1
        if self.stats is not None:
            self.stats[c.vpath] = Seen(c.mtime, c.size, c.key)
        if c.vpath in self.remade:
            noted = (line, self.kind(line, category), str(stamp) if _is_path(stamp) else None)
            if self.sink is not None:
                self.sink.checked(c, noted)
            else:
                self.seen[c.vpath] = noted
        self.outbox.add(c.vpath, c.mtime, c.size, c.key, c.payload, record)
