"""Conflict records: what a sync could not merge, kept in the store's synced `.kin-sync/conflicts/` folder.

One JSON file per memory (named by the SHA-1 of its virtual path) holding both versions, which one the
file kept and when. The folder's name begins with a dot, so the store's scan never takes a record for a
memory; it is committed like the memories, so every machine shows the same conflicts. Resolving writes
the chosen version through the product's own write (history keeps what it replaces) and drops the record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..store import sync_trust
from ..store.machine import Machine
from ..store.paths import rel_of_virtual
from ..store.write_hook import around_write
from . import files
from .git import SyncError, machine_of
from .report import ConflictKind

FOLDER = ".kin-sync/conflicts"
RESOLVE_SOURCE = "sync-resolve"
RECORD_LIMIT = 512 * 1024  # bytes of one record: a larger one keeps the versions out (git has them)
MAX_RECORDS = 128  # records read (by name); a sync never leaves more than a few
_NAME = re.compile(r"^[0-9a-f]{40}\.json$")
_KINDS: tuple[ConflictKind, ...] = ("overlap", "delete-vs-edit")


@dataclass(frozen=True)
class RecordVersion:
    machine: str
    machine_id: str
    content: bytes | None  # None: this machine had deleted the memory (or omitted: too large to keep)
    omitted: bool = False


@dataclass(frozen=True)
class ConflictRecord:
    path: str  # virtual path of the memory
    kind: ConflictKind
    kept: str  # the name of the machine whose version the file kept
    kept_id: str
    versions: tuple[RecordVersion, ...]
    time: float

    def mine(self, machine: Machine) -> RecordVersion | None:
        return next((v for v in self.versions if v.machine_id == machine.id), None)

    def theirs(self, machine: Machine) -> RecordVersion | None:
        if self.mine(machine) is None:
            return None  # a conflict between two other machines: "theirs" names no one
        return next((v for v in self.versions if v.machine_id != machine.id), None)


def record_rel(vpath: str) -> str:
    return f"{FOLDER}/{hashlib.sha1(vpath.encode('utf-8', 'surrogateescape')).hexdigest()}.json"


def _text(data: bytes | None) -> str | None:
    # surrogateescape: bytes that are not UTF-8 come back exactly (JSON escapes the surrogates)
    return None if data is None else data.decode("utf-8", "surrogateescape")


def encode(record: ConflictRecord) -> bytes:
    """The record's bytes, within RECORD_LIMIT: versions too large to keep are left out (marked so)."""
    data = _encode(record, omit=False)
    return data if len(data) <= RECORD_LIMIT else _encode(record, omit=True)


def _encode(record: ConflictRecord, omit: bool) -> bytes:
    body = {
        "path": record.path, "kind": record.kind, "kept": record.kept, "kept_id": record.kept_id,
        "versions": [{"machine": v.machine, "machine_id": v.machine_id,
                      "content": None if omit else _text(v.content), "omitted": omit and v.content is not None}
                     for v in record.versions],
        "time": record.time,
    }  # fmt: skip
    return json.dumps(body, indent=2, sort_keys=True).encode() + b"\n"


def _version(raw: dict[str, Any]) -> RecordVersion:
    content = raw.get("content")
    return RecordVersion(
        str(raw.get("machine", "")), str(raw.get("machine_id", "")),
        None if content is None else str(content).encode("utf-8", "surrogateescape"),
        raw.get("omitted") is True,
    )  # fmt: skip


def decode(data: bytes) -> ConflictRecord | None:
    """A record read back; None when it is not one (a hand-edited or foreign file)."""
    with contextlib.suppress(ValueError, TypeError, AttributeError, KeyError):
        raw = json.loads(data)
        kind = raw["kind"]
        if kind not in _KINDS or not isinstance(raw["path"], str):
            return None
        versions = tuple(_version(v) for v in raw["versions"])
        return ConflictRecord(raw["path"], kind, str(raw["kept"]), str(raw.get("kept_id", "")), versions,
                              float(raw.get("time", 0.0)))  # fmt: skip
    return None


def conflicts(root: Path) -> list[ConflictRecord]:
    """Every conflict on record in the store that a sync of this machine accepted (by path): read only
    under the names kin writes, at most MAX_RECORDS of them, each within RECORD_LIMIT."""
    root = Path(os.path.realpath(root))
    try:
        fd = files.open_parent(root, f"{FOLDER}/x", create=False)
    except files.NotAFile:
        return []
    if fd is None:
        return []
    out = []
    try:
        names = sorted(n for n in os.listdir(fd) if _NAME.match(n))[:MAX_RECORDS]
        accepted = sync_trust.read(root)[1] if names else {}
        for name in names:
            with contextlib.suppress(files.NotAFile, OSError):
                data, _st = files.read_at(fd, name, RECORD_LIMIT)
                if data is None or accepted.get(f"{FOLDER}/{name}") != sync_trust.digest(data):
                    continue
                found = decode(data)
                if found is not None and record_rel(found.path) == f"{FOLDER}/{name}":
                    out.append(found)
    finally:
        os.close(fd)
    return sorted(out, key=lambda r: r.path)


def find(root: Path, vpath: str) -> ConflictRecord | None:
    """The accepted record of a memory's conflict (see conflicts), None when there is none."""
    return next((r for r in conflicts(root) if r.path == vpath), None)


def _chosen(root: Path, record: ConflictRecord, keep: str | bytes, machine: Machine) -> bytes | None:
    """The bytes a resolution writes. "mine" is never the record's text: this machine's file when it
    kept this machine's version, else what this machine last committed of the memory."""
    if isinstance(keep, bytes):
        return keep
    if keep not in ("mine", "theirs"):
        return keep.encode("utf-8", "surrogateescape")
    if record.mine(machine) is None:
        names = " and ".join(v.machine for v in record.versions)
        raise SyncError(
            f"The conflict on {record.path} is between {names}, not this machine: choose a version by its content."
        )
    rel = rel_of_virtual(record.path)
    if keep == "mine":
        if record.kept_id == machine.id:
            return files.read(root, rel)
        return _own_last(root, rel, machine, record.path)
    version = record.theirs(machine)
    if version is None or version.omitted:
        raise SyncError(f"The other version of {record.path} is too large to keep in the record: "
                        "it is in the store's git history.")  # fmt: skip
    return version.content


def _own_last(root: Path, rel: str, machine: Machine, vpath: str) -> bytes | None:
    from . import objects, repo

    head = repo.head(root)
    touches = objects.authors(root, None, head, paths=[rel]).get(rel, []) if head else []
    mine = next((t for t in touches if t.machine is not None and t.machine.id == machine.id), None)
    if mine is None:
        raise SyncError(f"This machine has no version of {vpath} of its own to keep.")
    return None if mine.new is None else objects.blob(root, mine.new)


def resolve(root: Path, path: str, keep: str | bytes) -> None:
    """End the conflict on a memory: keep "mine" (this machine's version), "theirs" (the other's), or
    the given content; the record is dropped and the next sync sends both out."""
    root = Path(os.path.realpath(root))
    record = find(root, path)
    if record is None:
        raise SyncError(f"There is no sync conflict on {path}.")
    data = _chosen(root, record, keep, machine_of(root))
    rel = rel_of_virtual(path)
    if not files.safe_rel(rel):
        raise SyncError(f"{path} is not a place in the store a conflict can be resolved.")
    try:
        with around_write(root, files.hooked(rel), RESOLVE_SOURCE):
            _write_now(root, rel, data)
        _write_now(root, record_rel(path), None)
    except (files.NotAFile, OSError) as exc:
        raise SyncError(
            f"{path} could not be written: {getattr(exc, 'strerror', None) or 'not a file'}."
        ) from None


def _write_now(root: Path, rel: str, data: bytes | None) -> None:
    """Put data at rel whatever is there now (None: remove it)."""
    fd = files.open_parent(root, rel, create=data is not None)
    if fd is None:
        return
    try:
        name = files.name_of(rel)
        _old, st = files.read_at(fd, name)
        if data is None:
            files.drop_at(fd, name)
        else:
            files.put_at(fd, name, data, st)
    finally:
        os.close(fd)
    if data is None:
        files.prune_empty(root, rel)
