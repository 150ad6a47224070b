"""Checking many files through the findings cache: a stat per unchanged file, a read and a check for
the others, and the new results written back afterwards (off whoever waits for the answer).

The output of a file's check is opaque bytes made by the caller's `render` (the language server's framed
diagnostics, the CLI's JSON findings), so a hit costs no work beyond a row read.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..findings.model import Finding
from ..findings.run import check_memory
from ..store.context import Context
from ..store.freshness import Seen, seen_at
from ..store.lifecycle import next_change
from ..store.memory import Memory, Record, StrPath, from_record, load, record_of
from .findings import Entry, FindingsCache, record_text, stamp_probe, variant_key

Render = Callable[[Memory, list[Finding]], bytes]  # b"" when there is nothing to publish
_entry = tuple.__new__  # an Entry made in C: one per file checked, and its own constructor is Python code


@dataclass
class Checked:
    """One file's check: the rendered findings and its compact memory, made from its record when first
    asked for (a start-up worker answering from the cache needs only the record)."""

    vpath: str
    payload: bytes
    record: Record | None  # the compact form, for whoever keeps the memory (None: read it whole)
    until: float  # the earliest instant this file's findings can change
    path: StrPath
    mtime: float
    size: int
    key: int  # its freshness key (store/freshness.py)
    made: Memory | None = None  # the memory, once made

    @property
    def memory(self) -> Memory:
        if self.made is None:
            assert self.record is not None
            self.made = from_record(self.path, self.vpath, self.mtime, self.size, self.record, self.key)
        return self.made


@dataclass
class CachedCheck:
    checked: list[Checked]  # empty when each file went to `each` instead
    hits: int
    variant: str
    pending: list[Entry] = field(default_factory=list)  # new entries to write back
    valid_until: float = math.inf  # the earliest instant any file's findings can change
    probes: dict[str, str] = field(default_factory=dict)  # stamp -> what the disk said of it
    gone: list[str] = field(default_factory=list)  # cached files no longer there

    def write_back(self, cache: FindingsCache | None, now: float) -> None:
        if cache is not None and (self.pending or self.gone):
            cache.store(self.variant, self.pending, now, self.gone)


def check_files(
    files: Sequence[tuple[StrPath, str]],
    ctx: Context,
    form: str,
    render: Render,
    cache: FindingsCache | None,
    *,
    shard: tuple[int, int] = (0, 1),
    abandon: Callable[[], bool] | None = None,
    each: Callable[[Checked], None] | None = None,
    all_files: bool = True,
    stats: dict[str, Seen] | None = None,
    entries: Callable[[Entry], None] | None = None,
) -> CachedCheck | None:
    """Check `files` (memories, not MEMORY.md) in `ctx`; None only when `abandon` said stop. With `each`,
    every file's result is handed over as it is made instead of kept (a big store's worker then holds
    no list of 50,000 memories). `all_files` False: `files` are a few of the store's (checked again), not
    all of them, so no other file's entry is taken for gone. `stats`: what a stat of each file says when the
    caller has them already (a file without one is read and checked). `entries`: where each new entry
    goes instead of `pending`, once its file went to `each` (a worker writes them as it goes)."""
    variant = variant_key(ctx, form)
    if stats is None:
        stats = {vpath: s for path, vpath in files if (s := seen_at(path)) is not None}
    else:
        stats = {vpath: stats[vpath] for _, vpath in files if vpath in stats}
    result = CachedCheck([], 0, variant)
    probes: dict[str, str] = cache.probes if cache is not None else {}
    keep = result.checked.append if each is None else each
    # What the cache answers first, a batch at a time (each handed on before the next is read), then
    # the files it did not answer, checked.
    answered: set[str] = set()
    if cache is not None:
        paths = {vpath: path for path, vpath in files}
        only = None if all_files else list(stats)
        for hits, gone in cache.lookup_batches(variant, stats, ctx.now, shard, only=only):
            if abandon is not None and abandon():
                return None
            result.gone += gone
            for vpath, (record, payload, until) in hits.items():
                mtime, size, key = stats[vpath]
                result.valid_until = min(result.valid_until, until)
                if record[2] is not None:
                    result.probes.setdefault(str(record[2]), stamp_probe(record[2], probes))
                keep(Checked(vpath, payload, record, until, paths[vpath], mtime, size, key))
                answered.add(vpath)
        result.hits = len(answered)
    for n, (path, vpath) in enumerate(files):
        if abandon is not None and n % 256 == 0 and abandon():
            return None
        if vpath in answered:
            continue
        whole = load(path, vpath)
        if whole.read_error and not os.path.lexists(path):
            continue  # deleted between the scan and the read: gone, not unreadable
        payload = render(whole, check_memory(whole, ctx))
        fresh = record_of(whole)
        until = next_change(whole.category, whole.mtime, ctx.now, ctx.thresholds)
        probe = stamp_probe(whole.stamp, probes)
        result.valid_until = min(result.valid_until, until)
        if whole.stamp is not None:
            result.probes.setdefault(str(whole.stamp), probe)
        entry = None
        if fresh is None:
            until = ctx.now  # an odd file (unreadable, unusual values): never answered from a summary
            result.valid_until = until
        elif cache is not None and (text := record_text(fresh)) is not None:
            # Kept as its JSON until written back: a worker of a big store holds tens of thousands.
            entry = _entry(
                Entry, (vpath, whole.mtime, whole.size, whole.key, ctx.now, until, probe, text, payload)
            )
        # A file with a record gets its memory from it when someone asks (a worker never does).
        made = whole.compacted() if fresh is None else None
        keep(Checked(vpath, payload, fresh, until, path, whole.mtime, whole.size, whole.key, made))
        if entry is not None:
            (result.pending.append if entries is None else entries)(entry)
    return result
