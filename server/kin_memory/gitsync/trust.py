"""After each merge, what this machine trusts among the synced files (kept in `store/sync_trust.py`):

- a machine file is vouched for when the newest commit that changed it names the machine the file is
  named after (a commit can name any machine, so this only ranks: files planted in one commit under
  many names do not all look like their own machine's);
- a conflict record is accepted when this machine's own merge wrote it, or when it matches this
  machine's history: the version it says the file kept, and the version it gives as this machine's,
  are versions this machine's file held (the file now, a version kept in `kin-memory history`, or what
  this machine last committed of it). Everything in git can be written by whoever pushes, commit
  trailers included; this machine's own file and history cannot. A planted record (a conflict that
  never was, a "version" this machine never had) is ignored: no KM800, no text to keep.
"""

from __future__ import annotations

import contextlib
import logging
import re
from pathlib import Path

from ..history.query import HistoryError, history_of
from ..store import sync_trust
from ..store.machine import Machine
from ..store.paths import rel_of_virtual
from . import files, git, objects
from .records import FOLDER, ConflictRecord, decode, record_rel

log = logging.getLogger("kin_memory.gitsync")
_MACHINE = re.compile(r"^\.kin-sync/machines/([0-9a-f]{16})\.json$")


def update(root: Path, tip: str, local: str | None, machine: Machine, own: dict[str, bytes]) -> None:
    """Recompute the trusted lists for the commit the files are brought to (`local`: this machine's own
    commit before the merge; `own`: the records this machine's merges wrote in this sync, by path)."""
    done = git.run(
        root, ["ls-tree", "-r", "-z", "--full-tree", tip, "--", ".kin-sync"], what="Reading what came in"
    )
    machines: list[str] = []
    record_oids: dict[str, str] = {}
    for item in done.out.split(b"\0"):
        meta, _, raw = item.partition(b"\t")
        rel = raw.decode("utf-8", "surrogateescape")
        if not rel:
            continue
        if _MACHINE.match(rel):
            machines.append(rel)
        elif rel.startswith(f"{FOLDER}/"):
            record_oids[rel] = meta.decode().split(" ")[2]
    before_vouched, before_records = sync_trust.read(root)
    vouched = _vouched(root, tip, machines)
    held = objects.blobs(root, list(record_oids.values()))
    accepted: dict[str, str] = {}
    for rel, oid in record_oids.items():
        data = held.get(oid, b"")
        digest = sync_trust.digest(data)
        if before_records.get(rel) == digest or own.get(rel) == data:
            accepted[rel] = digest
            continue
        record = decode(data)
        if record is not None and record_rel(record.path) == rel and _matches(root, local, record, machine):
            accepted[rel] = digest
        else:
            log.warning("ignored the conflict record %s: its versions are not in the store's history", rel)
    sync_trust.write(root, [*vouched, *before_vouched], accepted)


def _vouched(root: Path, tip: str, rels: list[str]) -> list[str]:
    if not rels:
        return []
    touched = objects.authors(root, None, tip, paths=rels)
    out = []
    for rel in rels:
        ident = rel.rsplit("/", 1)[-1].removesuffix(".json")
        newest = next(iter(touched.get(rel, [])), None)
        if newest is not None and newest.machine is not None and newest.machine.id == ident:
            out.append(ident)
    return out


def _matches(root: Path, local: str | None, record: ConflictRecord, machine: Machine) -> bool:
    rel = rel_of_virtual(record.path)
    if not rel:
        return False
    held = _held(root, local, rel, record.path)
    for version in record.versions:
        if version.omitted:
            continue
        named = version.machine_id == record.kept_id or version.machine_id == machine.id
        sha = None if version.content is None else sync_trust.digest(version.content)
        if named and sha not in held:
            return False
    return True


def _held(root: Path, local: str | None, rel: str, vpath: str) -> set[str | None]:
    """The sha256 of every version this machine's file is known to have held (None: absent)."""
    out: set[str | None] = set()
    with contextlib.suppress(files.NotAFile, OSError):
        now = files.read(root, rel)
        out.add(None if now is None else sync_trust.digest(now))
    if local is not None:  # what this machine last committed of it (None: it had deleted it)
        committed = objects.content(root, local, rel)
        out.add(None if committed is None else sync_trust.digest(committed))
    with contextlib.suppress(HistoryError):
        out.update(v.sha for v in history_of(root, vpath))
    return out


def accepted(root: Path, rel: str) -> bool:
    with contextlib.suppress(Exception):
        return rel in sync_trust.read(root)[1]
    return False
