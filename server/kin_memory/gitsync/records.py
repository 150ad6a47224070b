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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..store.machine import Machine
from ..store.paths import rel_of_virtual
from ..store.write_hook import around_write
from . import files
from .git import SyncError, machine_of
from .report import ConflictKind

FOLDER = ".kin-sync/conflicts"
RESOLVE_SOURCE = "sync-resolve"
_KINDS: tuple[ConflictKind, ...] = ("overlap", "delete-vs-edit")


@dataclass(frozen=True)
class RecordVersion:
    machine: str
    machine_id: str
    content: bytes | None  # None: this machine had deleted the memory


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
    body = {
        "path": record.path, "kind": record.kind, "kept": record.kept, "kept_id": record.kept_id,
        "versions": [{"machine": v.machine, "machine_id": v.machine_id, "content": _text(v.content)}
                     for v in record.versions],
        "time": record.time,
    }  # fmt: skip
    return json.dumps(body, indent=2, sort_keys=True).encode() + b"\n"


def _version(raw: dict[str, Any]) -> RecordVersion:
    content = raw.get("content")
    return RecordVersion(
        str(raw.get("machine", "")), str(raw.get("machine_id", "")),
        None if content is None else str(content).encode("utf-8", "surrogateescape"),
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
    """Every conflict recorded in the store (by path)."""
    root = Path(os.path.realpath(root))
    try:
        fd = files.open_parent(root, f"{FOLDER}/x", create=False)
    except files.NotAFile:
        return []
    if fd is None:
        return []
    out = []
    try:
        for name in sorted(os.listdir(fd)):
            if not name.endswith(".json"):
                continue
            with contextlib.suppress(files.NotAFile, OSError):
                data, _st = files.read_at(fd, name)
                found = decode(data) if data is not None else None
                if found is not None and record_rel(found.path) == f"{FOLDER}/{name}":
                    out.append(found)
    finally:
        os.close(fd)
    return sorted(out, key=lambda r: r.path)


def find(root: Path, vpath: str) -> ConflictRecord | None:
    data = files.read(root, record_rel(vpath))
    found = decode(data) if data is not None else None
    return found if found is not None and found.path == vpath else None


def _chosen(record: ConflictRecord, keep: str | bytes, machine: Machine) -> bytes | None:
    if isinstance(keep, bytes):
        return keep
    if keep not in ("mine", "theirs"):
        return keep.encode("utf-8", "surrogateescape")
    version = record.mine(machine) if keep == "mine" else record.theirs(machine)
    if version is None:
        names = " and ".join(v.machine for v in record.versions)
        raise SyncError(
            f"The conflict on {record.path} is between {names}, not this machine: choose a version by its content."
        )
    return version.content


def resolve(root: Path, path: str, keep: str | bytes) -> None:
    """End the conflict on a memory: keep "mine" (this machine's version), "theirs" (the other's), or
    the given content; the record is dropped and the next sync sends both out."""
    root = Path(os.path.realpath(root))
    record = find(root, path)
    if record is None:
        raise SyncError(f"There is no sync conflict on {path}.")
    data = _chosen(record, keep, machine_of(root))
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
