"""A split first `check`: what each process keeps of its own files, and the parent's joining of it.

Each process of a split check (caches/sharded.py) hands every file, as soon as it is checked, to a
ShardSink, which keeps only what the parent prints and asks: the file's printed segment (with the
scan's findings of it joined, as one process joins them), its MEMORY.md listing entry and its freshness
key. Its findings and its memory are let go at once, so a shard of a 100k store holds no finding of a
file it finished with, and nothing of a file travels back but what is printed.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .check_output import Ages, decode_findings, here_now, segment_fields, segments_of
from .check_summary import PackedRow, count_severities, detail_of_fields, detail_with_rows, row_of

if TYPE_CHECKING:
    from ..findings.model import Finding
    from ..store.freshness import Key


class ShardPart(NamedTuple):
    """What a process of a split check made of its own files, for the caller (sent as a plain tuple,
    which travels marshalled)."""

    segments: list[PackedRow]  # each file's printed bytes and details, as the summary packs them
    counts: dict[str, int]  # findings per severity
    listed: list[tuple[str, str]]  # (vpath, listing line): the first lines of MEMORY.md's listing here
    hidden: int  # files of other workspaces the listing leaves out
    keys: list[tuple[str, Key]]  # each file's freshness key, as read
    listed_total: int  # how many lines the listing has here (see store.prompt_block.first_listing)
    seen: list[str]  # the paths the caller asked about (MEMORY.md's links, the scan's) checked here


class ShardSink:
    """A shard's Sink (caches/sharded.py): takes each checked file and keeps its ShardPart's share.
    `found`: where the check's render left each file's findings (cli.check_output.Keeping); `asked`: the
    paths the caller wants to know whether this shard checked (MEMORY.md's link targets; the scan's
    paths are asked too)."""

    def __init__(
        self,
        root: Path,
        only: Path | None,
        fmt: str,
        scan: dict[str, list[Finding]],
        active: tuple[str, ...],
        found: dict[str, list[Finding]],
        asked: frozenset[str] = frozenset(),
    ) -> None:
        from ..store.root import VIRTUAL_ROOT

        self.prefix, self.cut, self.here, self.only, self.fmt = (
            str(root),
            len(VIRTUAL_ROOT),
            here_now(),
            only,
            fmt,
        )
        self.scan, self.active, self.found = scan, active, found
        self.asked = asked | scan.keys()
        self.seen: list[str] = []
        self.segments: list[PackedRow] = []
        self.counts: dict[str, int] = {}
        self.listable: list[Any] = []
        self.keys: list[tuple[str, Key]] = []

    def take(self, c) -> None:
        findings = self.found.pop(c.vpath, None)
        if findings is None:  # answered by the cache: its payload is what its check made
            findings = decode_findings(c.payload)
        more = self.scan.get(c.vpath)
        if more:
            findings = findings + more
        # The rows of a file's own findings are its payload's JSON: spliced into the details, not made
        # and encoded again (unless a scan finding joined them).
        own = not more
        age = age_of(c)
        path = self.prefix + c.vpath[self.cut :]
        fields = segment_fields(path, self.here, c.vpath, findings, age, self.only, self.fmt, rows=not own)
        if fields is not None:  # packed as row_of packs a Segment, without making one
            vpath, until, piece, severities, rows, life = fields
            if own and life is not None:  # the payload's rows, or none when `only` left them out
                detail = detail_with_rows(
                    vpath, severities, (c.payload or b"[]") if severities else b"[]", life
                )
            else:  # its rows were made (a scan finding joined them), or it has none
                detail = detail_of_fields(vpath, severities, rows, life)
            self.segments.append((vpath, until, piece.encode("utf-8", "surrogatepass"), detail))
            count_severities(self.counts, severities)
        self.listable.append(listed_of(c))
        self.keys.append((c.vpath, c.key))
        if c.vpath in self.asked:
            self.seen.append(c.vpath)

    def made(self) -> tuple:
        from ..store.prompt_block import first_listing

        listed, total, hidden = first_listing(self.listable, self.active)
        return (self.segments, self.counts, listed, hidden, self.keys, total, self.seen)


def keys_read(checked, parts: list[ShardPart] | None) -> Iterator[tuple[str, Key]]:
    """(vpath, freshness key as read) of every file checked, in one process or in shards."""
    if parts is None:
        return ((c.vpath, c.key) for c in checked.checked)
    return (pair for part in parts for pair in part.keys)


def with_shards(
    root: Path, here: dict[str, list[Finding]], scan, parts: list[ShardPart], only: Path | None, fmt: str
) -> tuple[list[PackedRow], dict[str, int], int]:
    """(the segments, the findings per severity, how many files) of a split check: the shards' segments,
    and those of `here` (MEMORY.md's findings) and of any path the scan found that no shard checked, in
    the order one process makes them, as the summary packs them."""
    checked = {vpath for part in parts for vpath in part.seen}  # of the scan's paths, those checked
    here = dict(here)
    for vpath, found in scan.items():
        if vpath not in checked:
            here[vpath] = here.get(vpath, []) + found
    counts: dict[str, int] = {}
    rows: list[PackedRow] = []
    for seg in segments_of(root, here, {}, only, fmt):
        rows.append(row_of(seg))
        count_severities(counts, seg.severities)
    for part in parts:
        rows += part.segments
        for severity, n in part.counts.items():
            counts[severity] = counts.get(severity, 0) + n
    rows.sort(key=itemgetter(0))
    # Each file is checked by one shard; MEMORY.md and the paths no shard checked are `here`.
    return rows, counts, sum(len(part.keys) for part in parts) + len(here)


class Listed(NamedTuple):
    """What MEMORY.md's check lists of a memory (store.prompt_block.Listable), from its record."""

    vpath: str
    category: str
    stamp: object
    title: str


def listed_of(c) -> Any:
    """A checked file as the listing reads it: from its record (the values its compact memory would
    hold), or its memory when it has none."""
    if c.record is None:
        return c.memory
    category, _, stamp, *_, title = c.record
    return _listed(Listed, (c.vpath, category, stamp, title))


_listed = tuple.__new__  # in C: one per file, and the named tuple's own constructor is Python code


def age_of(c) -> tuple[float, str, float]:
    # The category from the record when there is one: no memory is made for it.
    return (c.until, c.memory.category if c.record is None else c.record[0], c.mtime)


def ages_of(checked) -> Ages:
    return {c.vpath: age_of(c) for c in checked}
