"""Segment snapshots: an unchanged part of the store answered as one block, not a row per file.

A start-up worker of a big store spent most of its time answering tens of thousands of files one by one
from the findings cache (a row read, a record decoded, a listing line made, a frame and a record sent,
each). The store's files are therefore split into SEGMENTS fixed buckets by a hash of their virtual path;
a shard of the start-up is a set of whole segments. After a check, each segment's outcome is kept as one
row: the framed diagnostics, the URIs they are for, the records, the prompt-block listing lines, keyed by
a digest of the segment's listing (every file's vpath, mtime and size). A warm start then stats its files,
digests each segment's listing and, where the digest and the workspace-stamp probes still hold, sends the
segment's block as it is, less the files whose findings have aged since (a message such as "expires in 3
hours" moves on): those few are checked again one by one, as are the segments that changed.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# What `json.dumps` makes of a str, without its per-call dispatch (a cold start quotes every vpath).
_json_string = json.encoder.encode_basestring_ascii

SEGMENTS = 64  # fixed buckets of the store's files; a shard of n workers is every segment s with s % n


def segment_of(vpath: str) -> int:
    return zlib.crc32(vpath.encode("utf-8", "surrogatepass")) % SEGMENTS


def listing_digest(files: Iterable[tuple[str, int]]) -> bytes:
    """What a segment's files are on disk, as one digest of each file's (vpath, freshness key): any file
    added, removed, renamed or changed (store/freshness.py) changes it. Order-independent (sorted here).
    The vpaths joined by NUL (which no name holds), then the keys as fixed-width numbers: hashed in a few
    calls rather than a formatted line per file (a warm start digests every file of the store)."""
    rows = sorted(files)
    h = hashlib.blake2b(digest_size=16)
    if rows:
        vpaths, keys = zip(*rows, strict=True)
        h.update("\0".join(vpaths).encode("utf-8", "surrogatepass"))
        h.update(b"\1")
        try:
            h.update(array("q", keys).tobytes())
        except (TypeError, OverflowError):  # not a key (a damaged index row): digested as written
            h.update(repr(rows).encode("utf-8", "surrogatepass"))
    return h.digest()


LISTED, HIDDEN, UNLISTED = "l", "h", "-"  # a file in the prompt block's listing: listed, counted, neither


def listing_kind(line: str | None, category: object) -> str:
    """LISTED, HIDDEN or UNLISTED: a file with a listing line, one counted as hidden, a session."""
    return LISTED if line is not None else UNLISTED if category == "session" else HIDDEN


@dataclass
class Snapshot:
    """One segment's check in one variant, as kept (see FindingsCache.segments)."""

    seg: int
    listing: bytes  # listing_digest of its files
    since: float  # the check's clock: the snapshot holds from then on (each file until its own time)
    valid_until: float  # the earliest of its files' (see `files`)
    probes: list[list[str]]  # [stamp, what the disk said of it] for the path stamps of its files
    frames: bytes  # framed publishDiagnostics of its files with findings, concatenated
    files: str  # JSON: [[vpath, valid until, frame start, frame end, uri or "", LISTED|HIDDEN|UNLISTED]]
    records: str  # JSON: [[vpath, mtime, size, key, record], ...] for every file ("" when not read)
    listed: str  # JSON: [[vpath, prompt-block line], ...] for its files listed in the context
    count: int  # files
    # What a start needs of `files` while none of them has aged (see valid_until), kept apart so that
    # it need not decode them: the URIs of the frames joined by NUL, and how many files are HIDDEN.
    uris: str = ""
    hidden: int = 0


@dataclass
class SnapshotBuilder:
    """A segment's files as a check produced them, to be kept as a Snapshot once all of it is known."""

    files: list[tuple[str, int]] = field(default_factory=list)  # (vpath, freshness key)
    records: list[str] = field(default_factory=list)  # each file's [vpath, mtime, size, key, record], as JSON
    index: list[list[Any]] = field(default_factory=list)  # Snapshot.files
    payloads: list[bytes] = field(default_factory=list)
    size: int = 0  # bytes of payloads so far
    listed: list[tuple[str, str]] = field(default_factory=list)
    probes: dict[str, str] = field(default_factory=dict)

    def add(self, vpath: str, mtime: float, size: int, key: int, record_json: str, until: float,
            payload: bytes, uri: str, line: str | None, kind: str) -> None:  # fmt: skip
        """One file; `record_json` is its record as the findings cache keeps it (JSON text)."""
        self.files.append((vpath, key))
        self.records.append(f"[{_json_string(vpath)},{mtime!r},{size},{key},{record_json}]")
        start = self.size
        if payload:
            self.payloads.append(payload)
            self.size += len(payload)
        self.index.append([vpath, until, start, self.size, uri if payload else "", kind])
        if line is not None:
            self.listed.append((vpath, line))

    def snapshot(self, seg: int, since: float) -> Snapshot | None:
        if not self.files:
            return None
        try:
            listed = json.dumps(self.listed)
            files = json.dumps(self.index)  # an `until` of inf is written as Infinity (Python reads it)
        except (TypeError, ValueError):
            return None
        return Snapshot(
            seg,
            listing_digest(self.files),
            since,
            min(until for _, until, *_ in self.index),
            sorted([stamp, probe] for stamp, probe in self.probes.items()),
            b"".join(self.payloads),
            files,
            "[" + ",".join(self.records) + "]",
            listed,
            len(self.files),
            "\0".join(uri for *_, uri, _ in self.index if uri),
            sum(1 for *_, kind in self.index if kind == HIDDEN),
        )
