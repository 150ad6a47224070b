"""What a worker sends back about its files: compact records (pickled, or named by a kept segment snapshot) and the shard's result."""

from __future__ import annotations

import json
import logging
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the workers import no more than they need before the fork
    from ....caches.snapshot_records import SnapshotRecords
    from ....store.memory import Memory


log = logging.getLogger("kin_memory.lsp")


class _Named:
    """A chunk of records named by its files' vpaths, joined by NUL (which no file name holds): one
    string is sent and read at a fraction of the cost of a tuple per file, and split only when needed."""

    names: str

    @property
    def vpaths(self) -> list[str]:
        return self.names.split("\0") if self.names else []

    def __len__(self) -> int:
        return self.names.count("\0") + 1 if self.names else 0


@dataclass
class PickledRecords(_Named):
    """Records of files checked one by one, as the worker pickled them: about 140 bytes a file until they
    are made memories once every worker is done (a compact memory is four times that, and the server's
    memory peaks while the workers run)."""

    names: str
    blob: bytes

    @classmethod
    def of(cls, records: list[tuple[str, float, int, int, Any]]) -> PickledRecords:
        return cls("\0".join(vpath for vpath, *_ in records), pickle.dumps(records, pickle.HIGHEST_PROTOCOL))

    def decoded(self) -> list[tuple[str, float, int, int, Any]]:
        return pickle.loads(self.blob)


@dataclass
class JsonRecords(_Named):
    """A segment snapshot's records, read from the findings cache and decoded only when they are made
    memories: what the server needs first from a warm start is the diagnostics, not the records (which
    the worker therefore neither reads nor sends)."""

    names: str  # the files it answers for (see _Named)
    snapshot: tuple[str, str, int, bytes]  # (store root, variant, segment, listing digest)
    skip: frozenset[str] = frozenset()  # files of the snapshot checked again (sent on their own)

    def decoded(self, kept: SnapshotRecords) -> list[tuple[str, float, int, int, Any]]:
        """Each file's (vpath, mtime, size, key, record); the record None (the file is read again) when the
        snapshot is not there any more or does not hold the file. The worker sent the segment because
        the snapshot's listing digest was that of the files' (vpath, freshness key) on disk: its own
        (mtime, size, key) are theirs."""
        vpaths = self.vpaths
        _, variant, seg, listing = self.snapshot
        text = kept.get(variant, seg, listing)
        rows = json.loads(text) if text is not None else []
        if not isinstance(rows, list):
            raise ValueError("a snapshot's records are not a list")
        by_vpath = {
            row[0]: row
            for row in rows
            if isinstance(row, list) and len(row) == 5 and isinstance(row[0], str) and row[0] not in self.skip
        }
        out: list[tuple[str, float, int, int, Any]] = []
        for vpath in vpaths:
            row = by_vpath.get(vpath)
            if (
                row is not None
                and isinstance(row[1], (int, float))
                and isinstance(row[2], int)
                and isinstance(row[3], int)
            ):
                out.append((vpath, row[1], row[2], row[3], row[4]))
            else:
                out.append((vpath, 0.0, 0, 0, None))
        return out


@dataclass
class ShardResult:
    with_findings: list[str]
    listed: list[tuple[str, str]]
    hidden: int
    index_vpath: str | None = None
    problems: list = field(default_factory=list)  # the scan's problems (from the first worker only)
    listed_total: int | None = None  # how many files `listed` had, once shortened (see shorten_listing)
    hits: int = 0  # files answered by the findings cache
    # How the recall index compares with the shard's files: (files it holds as they are, files it lacks
    # or holds with another freshness key, the first RECALL_KEEP of those); None when it could not be read.
    recall: tuple[int, int, list[str]] | None = None
    # Sent in chunks after the above and gathered by the parent as they arrive (see _Incoming):
    frames: list[bytes] = field(default_factory=list)  # framed publishDiagnostics
    memories: dict[str, Memory | None] = field(default_factory=dict)  # compact; None: read it again
    records: list[PickledRecords | JsonRecords] = field(default_factory=list)  # not made memories yet
    prefix: str = ""  # the store's root, which a record's vpath is below

    def count(self) -> int:
        return len(self.memories) + sum(len(chunk) for chunk in self.records)

    def shorten_listing(self) -> None:
        """Keep the listing's first lines only, and how many it had: MEMORY.md's prompt block shows no
        more of it, and the first lines of the whole store are the first of every worker's first lines.
        At 100k memories the lines sent were a third of what a warm start's workers sent the server."""
        from ....store.prompt_block import first_by_path

        if self.listed_total is None:
            self.listed_total = len(self.listed)
            self.listed = first_by_path(self.listed)

    def listed_count(self) -> int:
        return len(self.listed) if self.listed_total is None else self.listed_total

    def vpaths(self) -> set[str]:
        """Every file of the shard, made a memory or not yet."""
        found = set(self.memories)
        for chunk in self.records:
            found.update(chunk.vpaths)
        return found

    def make_memories(self) -> None:
        """The records made compact memories."""
        from ....caches.snapshot_records import SnapshotRecords
        from ....store.memory import from_record

        prefix, memories = self.prefix, self.memories
        kept = SnapshotRecords(Path(prefix))
        try:
            while self.records:
                chunk = self.records.pop(0)
                rows = chunk.decoded(kept) if isinstance(chunk, JsonRecords) else chunk.decoded()
                for vpath, mtime, size, key, record in rows:
                    path = prefix + vpath[len("/memories") :]
                    memories[vpath] = (
                        from_record(path, vpath, mtime, size, record, key) if record is not None else None
                    )
        finally:
            kept.close()


class KnownFiles:
    """Whether a vpath is one of the workers' files, without a set of all of them first: MEMORY.md asks
    for the few files it links to, and a set of a 100k store's names cost the end of a warm start some
    30 ms. A file named by a snapshot is looked for in the chunks of its own segment only."""

    def __init__(self, results: list[ShardResult]) -> None:
        self.results = results
        self.sets: dict[int, set[str]] = {}  # id of a chunk of records -> its vpaths

    def __contains__(self, vpath: object) -> bool:
        from ....caches.segments import segment_of

        if not isinstance(vpath, str):
            return False
        seg = segment_of(vpath)
        for r in self.results:
            if vpath in r.memories:
                return True
            for chunk in r.records:
                if isinstance(chunk, JsonRecords) and chunk.snapshot[2] != seg:
                    continue
                names = self.sets.get(id(chunk))
                if names is None:
                    names = self.sets[id(chunk)] = set(chunk.vpaths)
                if vpath in names:
                    return True
        return False
