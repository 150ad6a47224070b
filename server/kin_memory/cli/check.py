"""`kin-memory check`: diagnostics for a whole store, printed like a linter or as JSON."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sinks import terminal
from .check_output import (
    Keeping,
    Part,
    add_counts,
    cache_payload,
    decode_findings,
    findings_of,
    output_part,
    part_of,
    print_summary,
    render_rows,
    segments_of,
    write_text,
)
from .check_shards import ShardPart, ShardSink, ages_of, keys_read, listed_of, with_shards
from .common import UsageError, settings_for, workspace_flag

if TYPE_CHECKING:  # the checking machinery is imported when `check` runs, not to build the parser
    from ..findings.model import Finding
    from ..store.freshness import Key, Seen
    from .check_summary import Segment


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("check", parents=[common], help="diagnostics for every file of the store")
    p.add_argument(
        "path", nargs="?", help="store root or a folder/file inside it (default: the resolved root)"
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--duplicates",
        action="store_true",
        help="also report near-duplicates (KM601) and possible contradictions (KM604) through the recall index (updated incrementally)",
    )
    p.add_argument(
        "--example-if-missing",
        action="store_true",
        help="check the bundled example store when the resolved store does not exist",
    )
    p.set_defaults(func=run)


def example_root() -> Path:
    """A fresh copy of the bundled example store, with the file ages its manifest asks for.

    Ages cannot ship inside a package (installs reset mtimes), so the copy gets them applied; the copy
    lives in a temporary folder so checking the example never writes into the installed package.
    """
    import shutil
    import tempfile
    import time
    from importlib import resources

    source = Path(str(resources.files("kin_memory") / "example_store"))
    target = Path(tempfile.mkdtemp(prefix="kin-memory-example-")) / "memory"
    shutil.copytree(source, target)
    manifest = target / ".mtimes.json"
    ages = json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {}
    now = time.time()
    for rel, days in ages.items():
        path = target / rel
        if not rel.startswith("_") and path.is_file():
            os.utime(path, (now - days * 86400, now - days * 86400))
    return target


def run(args: argparse.Namespace) -> int:
    from ..findings.catalog import ERROR
    from ..findings.settings_files import settings_findings
    from ..store.context import cli_context
    from ..store.root import resolve_root

    target: Path | None = Path(os.path.abspath(os.path.expanduser(args.path))) if args.path else None
    root = resolve_root(args.root).path if args.root or not target else None
    only: Path | None = None
    if target is not None and root is None:
        if not target.exists():
            raise UsageError(f"no such file or folder: {args.path}")
        resolved = resolve_root(None).path
        real = Path(os.path.realpath(target))
        if real == resolved or resolved in real.parents:
            root, only = resolved, real
        else:
            root = real if real.is_dir() else real.parent
            only = None if real.is_dir() else real
    assert root is not None
    note = ""
    if not root.is_dir():
        if args.example_if_missing:
            note = f"no memory store at {terminal.field(root)}; checking the bundled example store instead"
            root = example_root()
        else:
            raise UsageError(f"memory store not found: {root} (set KIN_MEMORY_DIR or pass --root)")
    root = Path(os.path.realpath(root))
    workspace = workspace_flag(args.workspace, root)
    ctx = cli_context(root, workspace)
    if args.duplicates or note:  # KM601 reads the recall index: not answered from a summary
        part = _store_part(root, ctx, only, args.format, args.duplicates)
    else:
        part = _summarised_store_part(root, ctx, only, args.format)
    settings_rows: list[tuple[str, Finding]] = []
    for settings_path, found in settings_findings(settings_for(workspace)).items():
        settings_rows += [(str(settings_path), f) for f in found]
    settings_rows += _conflict_rows(root, only)
    extra = render_rows(settings_rows, args.format)
    if note:
        print(note, file=sys.stderr)
    if args.format == "json":
        print(json.dumps(part.out + extra.out, indent=2))
    else:
        write_text(part.out + extra.out)
        print_summary(add_counts(part.counts, extra.counts), part.files)
    _join_writers()  # the findings cache is complete when the check ends
    if note:
        return 0  # the example store is broken on purpose: its findings are the demonstration
    return 1 if ERROR in part.counts or ERROR in extra.counts else 0


def _conflict_rows(root: Path, only: Path | None) -> list[tuple[str, Finding]]:
    """KM800: the memories a sync left in conflict (the same rows the editors show)."""
    from ..store.paths import real_path

    if not os.path.isdir(os.path.join(root, ".kin-sync", "conflicts")):
        return []  # not synced, or nothing in conflict: nothing more to import
    from ..gitsync.diagnostics import conflict_findings, disk_lines

    rows = []
    for vpath, found in conflict_findings(root, disk_lines(root)).items():
        path = real_path(root, vpath)
        if only is None or path == only or only in path.parents:
            rows += [(str(path), f) for f in found]
    return rows


def _store_part(root: Path, ctx, only: Path | None, fmt: str, duplicates: bool) -> Part:
    """The store's part of the output, every file looked up or checked (with KM601 when asked)."""
    from ..findings.store_level import scan_findings

    with _collection_paused():
        store, results, _, _ = check_through_cache(root, ctx, scan_names_of(root))
    _join_writers()
    if duplicates:
        _merge(results, _duplicates(root, store, ctx))
    _merge(results, scan_findings(store.scan_problems()))
    return part_of(segments_of(root, results, {}, only, fmt), len(results), fmt)


def scan_names_of(root: Path):
    from ..store.scan import scan_names

    return scan_names(root)


# A summary is the check's output cut into one segment per file (see check_summary.py). Files without
# findings whose findings cannot change are left out.
LIFECYCLE_CODES = frozenset({"KM400", "KM401", "KM402", "KM403", "KM404"})
# The summary is written again once this share of its segments has aged (bringing one up to date costs
# microseconds; writing a 10k store's summary, some tens of milliseconds).
RESAVE_AGED_SHARE = 0.05


@contextmanager
def _collection_paused() -> Iterator[None]:
    """No cyclic garbage collection while a whole store is checked and printed (forked workers
    included). What a check makes lives until it prints, and none of it is garbage in a cycle: the
    collections a 10k store's first check ran freed nothing and cost a tenth of its time, a full
    collection going over every finding and record kept so far. (The `kin-memory` program runs a check
    without collection from its start: see cli.entry.)"""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# What the last whole-store check made, held until the next one: the `kin-memory` process ends as soon
# as the check is printed (cli.entry), and freeing it object by object, as its function returned, took
# 3 ms of a 10k store's first check.
_HELD: list[object] = []


def _summarised_store_part(root: Path, ctx, only: Path | None, fmt: str) -> Part:
    """The store's part of the output, from the summary of the last identical check when every file's
    freshness key is what it was then (a stat per file). On a big store some file's message ages every
    second ("expires … in 22 hours"), so a summary redone whole would almost never be used: an aged
    lifecycle message is brought up to date from the file's category and mtime, and any other aged
    file is checked again, alone."""
    with _collection_paused():
        return _summarised(root, ctx, only, fmt)


def _summarised(root: Path, ctx, only: Path | None, fmt: str) -> Part:
    from ..caches.findings import FindingsCache, variant_key
    from ..store.freshness import seen_at
    from .check_summary import packed_parts  # before the workers fork: each would import it again

    _join_writers()  # what an earlier split check in this process left to write is written first
    cache = FindingsCache.open(root)
    scanned = scan_names_of(root)
    how = f"{variant_key(ctx, 'cli')}\n{fmt}\n{os.getcwd()}\n{only}\n"
    try:
        # A cache that holds nothing for this check can answer nothing: no file is stat'ed ahead (each is
        # read once, by the process that checks it, which has no stat to look up), and the summary's key
        # is made afterwards from the keys of the readings.
        cold = cache is None or not cache.holds_any(variant_key(ctx, "cli"))
        stats: dict[str, Seen] = {}
        if not cold:
            # One stat per file serves both the summary's key and the check's lookups.
            seen = [(vpath, seen_at(path)) for path, vpath, _ in scanned[0]]
            stats = {vpath: s for vpath, s in seen if s is not None}
            key = summary_key(how, [(vpath, None if s is None else s.key) for vpath, s in seen])
            saved = cache.summary(key, ctx.now) if cache is not None else None
            if saved is not None:
                part = _from_summary(saved, root, ctx, only, fmt, cache, key)
                if part is not None:
                    return part
        from ..findings.store_level import scan_findings

        problems = scanned[1]
        scan = scan_findings(problems)
        sink = partial(ShardSink, root, only, fmt, scan, ctx.active)
        _, results, checked, parts = check_through_cache(
            root, ctx, scanned, cache, sink, stats, whole_store=False
        )
        if cold:  # MEMORY.md, read apart, and any file gone since the scan: a stat each
            key = summary_key(how, _keys_after(scanned[0], list(keys_read(checked, parts))))
        keep = checked.valid_until > ctx.now and not problems
        if parts is not None:  # the shards' segments, already encoded
            rows, counts, files = with_shards(root, results, scan, parts, only, fmt)
            text = b"".join(map(itemgetter(2), rows))  # printed, and kept as the summary's text
            if keep and cache is not None:
                until = min(map(itemgetter(1), rows), default=float("inf"))
                cache.put_summary(
                    key, ctx.now, until, checked.probes, packed_parts(files, counts, rows, text)
                )
            _HELD[:] = [scanned, parts, rows, results, checked]
            return output_part(text, counts, files, fmt)
        _merge(results, scan)
        segments = segments_of(root, results, ages_of(checked.checked), only, fmt)
        if keep and cache is not None:
            _save_summary(cache, key, ctx.now, checked.probes, segments, len(results))
        return part_of(segments, len(results), fmt)
    finally:
        if cache is not None:
            from ..caches.writing import close_after_writers

            close_after_writers(cache)


def _join_writers() -> None:
    """A split check's entries are written by processes of their own while this one prints (see
    caches/writing.py): the check ends with them."""
    from ..caches.writing import join_writers

    join_writers()


def summary_key(how: str, keys: list[tuple[str, Key | None]]) -> str:
    """The key of a summary: how the check ran and every file's freshness key (None: not readable)."""
    import hashlib

    listing = "\n".join(f"{vpath}\0{key}" for vpath, key in sorted(keys, key=_by_vpath))
    return hashlib.sha256((how + listing).encode("utf-8", "surrogatepass")).hexdigest()


def _keys_after(scanned: list, read: list[tuple[str, Key]]) -> list[tuple[str, Key | None]]:
    """Every scanned file's (vpath, freshness key) after a first check: as its reading found it, else
    (MEMORY.md, read apart, and a file gone since the scan) a stat now. When every file but MEMORY.md
    was read (the usual case) the readings are taken as they are, not looked up one by one (100k
    lookups at 100k)."""
    apart = [(path, vpath) for path, vpath, is_index in scanned if is_index]
    # The readings are of scanned files, one each: as many as the others scanned, they are those. (Were
    # one counted twice, the key would name no store and the summary simply never be used.)
    if len(read) + len(apart) == len(scanned):
        return [*read, *((vpath, _key_now(path)) for path, vpath in apart)]
    by_vpath = dict(read)
    return [(v, by_vpath[v] if v in by_vpath else _key_now(path)) for path, v, _ in scanned]


def _key_now(path) -> Key | None:
    from ..store.freshness import seen_at

    seen = seen_at(path)
    return None if seen is None else seen.key


def _by_vpath(item: tuple[str, Any]) -> str:
    return item[0]


def _save_summary(
    cache, key: str, now: float, probes: dict[str, str], segments: list[Segment], files: int
) -> None:
    from .check_summary import pack

    until = min((seg.until for seg in segments), default=float("inf"))
    cache.put_summary(key, now, until, probes, pack(files, segments))


def _from_summary(saved: bytes, root: Path, ctx, only: Path | None, fmt: str, cache, key: str) -> Part | None:
    """The summary's output with its aged segments brought up to date; None when it cannot be used."""
    from .check_summary import Packed

    packed = Packed.unpack(saved)
    if packed is None:
        return None
    try:
        aged = packed.aged(ctx.now)
        heavy = [i for i in aged if not _age_lightly(packed, i, root, ctx, only, fmt)]
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    probes: dict[str, str] = {}
    if heavy and not _recheck(packed, heavy, root, ctx, only, fmt, cache, probes):
        return None
    if heavy or len(aged) > RESAVE_AGED_SHARE * len(packed):
        until = min(packed.until, default=float("inf"))
        cache.put_summary(key, ctx.now, until, {**cache.summary_probes(key), **probes}, packed.repack())
    return output_part(packed.text(), dict(packed.counts), packed.files, fmt)


def _age_lightly(packed, i: int, root: Path, ctx, only: Path | None, fmt: str) -> bool:
    """Bring an aged segment up to date when only its lifecycle message moved (same code, new
    wording): the file is unchanged, so nothing else in it can have. False when it needs a check."""
    from ..findings.lifecycle_messages import lifecycle_message
    from ..findings.model import Finding
    from ..store.lifecycle import lifecycle, next_change
    from ..store.span import Span

    seg = packed.segment(i)
    rows, life = seg.rows, seg.life
    if rows is None or life is None:
        return False
    at = [k for k, row in enumerate(rows) if row[0] in LIFECYCLE_CODES]
    if len(at) != 1:
        return False
    category, mtime = life
    said = lifecycle_message(category, lifecycle(category, mtime, ctx.now, ctx.thresholds), ctx.thresholds)
    if said is None or said[0] != rows[at[0]][0]:
        return False  # a new status: suppression or severity settings may treat it otherwise
    rows = [list(row) for row in rows]
    rows[at[0]][2] = said[1]
    found = [
        Finding(code, Span(*span), message, severity=severity) for code, severity, message, *span in rows
    ]
    until = next_change(category, mtime, ctx.now, ctx.thresholds)
    fresh = segments_of(root, {seg.vpath: found}, {seg.vpath: (until, category, mtime)}, only, fmt)
    if not fresh:
        return False
    packed.replace(i, fresh[0])
    return True


def _recheck(packed, todo: list[int], root: Path, ctx, only: Path | None, fmt: str, cache, probes) -> bool:
    """Check the files of these segments again, alone (their findings cache entries are used when still
    good); False when one vanished or became odd since: the whole check then says what happened."""
    from ..caches.checked import check_files
    from ..store.paths import INDEX_VPATH
    from ..store.root import VIRTUAL_ROOT
    from .check_summary import Segment

    vpaths = [packed.segment(i).vpath for i in todo]
    if INDEX_VPATH in vpaths:
        return False
    prefix = str(root)
    redo = check_files(
        [(prefix + v[len(VIRTUAL_ROOT) :], v) for v in vpaths],
        ctx,
        "cli",
        cache_payload,
        cache,
        all_files=False,
    )
    assert redo is not None  # nothing to abandon
    by_vpath = {c.vpath: c for c in redo.checked}
    ages = ages_of(redo.checked)
    for i, vpath in zip(todo, vpaths, strict=True):
        c = by_vpath.get(vpath)
        if c is None or not c.until > ctx.now:
            return False
        fresh = segments_of(root, {vpath: decode_findings(c.payload)}, ages, only, fmt)
        packed.replace(i, fresh[0] if fresh else Segment(vpath, float("inf"), "", []))
    redo.write_back(cache, ctx.now)
    probes.update(redo.probes)
    return True


def check_through_cache(
    root: Path,
    ctx,
    scanned,
    cache=None,
    sink: Callable[[dict[str, list[Finding]], frozenset[str]], Any] | None = None,
    stats: dict[str, Any] | None = None,
    whole_store: bool = True,
) -> tuple[Any, dict[str, list[Finding]], Any, list[ShardPart] | None]:
    """(the store, vpath → findings, the CachedCheck, None) for every file of `scanned` (a
    `scan_names`), unchanged files answered by the findings cache (a stat each, or what `stats` says
    when the caller has stat'ed them; `cache` when the caller has it open); what had to be checked is
    written back for the next run. With `sink`, a check split across processes hands each file, as it
    is checked, to a ShardSink of its process (sink(where the check leaves each file's findings, the
    paths asked about: MEMORY.md's link targets)): the findings then hold MEMORY.md's alone, the
    CachedCheck holds no file, and the fourth item is the shards' parts. `whole_store` False: the caller only prints, so no Store (and no memory per file) is made:
    the first item is None."""
    from ..caches.checked import check_files
    from ..caches.findings import FindingsCache
    from ..findings.budget import link_targets
    from ..findings.run import check_memory
    from ..store.memory import load
    from ..store.paths import INDEX_VPATH
    from ..store.prompt_block import compose_from, listing

    files, problems = scanned
    owned = cache is None
    if owned:
        cache = FindingsCache.open(root)
    try:
        memories = [(path, vpath) for path, vpath, is_index in files if not is_index]
        render = Keeping()
        index_path = next((path for path, _, is_index in files if is_index), None)
        index = load(index_path, INDEX_VPATH, is_index=True) if index_path is not None else None
        # A split check's shards say which of MEMORY.md's link targets they hold (no set of every path)
        asked = frozenset(vpath for *_, vpath in link_targets(index)) if index is not None else frozenset()
        shard_sink = None if sink is None else partial(sink, render.found, asked)
        split = _check_sharded(root, memories, ctx, cache, render, shard_sink, stats)
        checked = (
            split[0] if split is not None else check_files(memories, ctx, "cli", render, cache, stats=stats)
        )
        assert checked is not None  # nothing to abandon
        rendered = None
        if split is not None and sink is not None:
            rendered = [ShardPart(*part) for part in split[1]]
        disk: dict[str, Any] = {c.vpath: c.memory if whole_store else listed_of(c) for c in checked.checked}
        found = render.found
        results = {} if rendered is not None else {c.vpath: findings_of(c, found) for c in checked.checked}
        if index is not None:
            total = None
            if rendered is None:
                listed, hidden = listing(disk.values(), ctx.active)
                known = set(disk)
            else:  # each shard listed its own files, their first lines
                listed = [pair for part in rendered for pair in part.listed]
                hidden = sum(part.hidden for part in rendered)
                total = sum(part.listed_total for part in rendered)
                known = {vpath for part in rendered for vpath in part.seen}
            block = compose_from(listed, hidden, index, total)
            results[INDEX_VPATH] = check_memory(index, ctx, block=block, known=known)
            disk[INDEX_VPATH] = index
        store = None
        if whole_store:
            from ..store.store import Store  # here: a check that only prints makes none

            store = Store(root)
            store.adopt(disk, problems)
        checked.write_back(cache, ctx.now)
    finally:
        if owned and cache is not None:
            from ..caches.writing import close_after_writers

            close_after_writers(cache)
    return store, results, checked, rendered


def _check_sharded(root: Path, memories: list[tuple[str, str]], ctx, cache, render, sink=None, stats=None):
    """A first check (the cache holds nothing for it) of a store big enough, split across forked
    processes, a shard each, as the server's cold start splits it: (the CachedCheck one process would
    have made, or with `sink` one holding no file, and what each shard's Sink made), or None (then
    one process checks). A cache that answers is left to one process: a stat and a row per file cost
    less than a fork."""
    from ..caches.findings import variant_key
    from ..caches.sharded import check_sharded, workers_for

    cold = cache is None or not cache.holds_any(variant_key(ctx, "cli"))
    count = workers_for(len(memories), cold)
    if count < 2:
        return None
    return check_sharded(memories, ctx, "cli", render, root, count, sink=sink, stats=stats, cache=cache)


def _duplicates(root: Path, store, ctx) -> dict[str, list[Finding]]:
    from ..recall.service import Recall  # the index only when duplicates are asked for
    from ..recall.store_findings import duplicate_findings

    recall = Recall(root)
    recall.sync_memories(store.memories())
    return duplicate_findings(store, ctx, recall)


def _merge(results: dict[str, list[Finding]], more: dict[str, list[Finding]]) -> None:
    for vpath, found in more.items():
        results[vpath] = results.get(vpath, []) + found
