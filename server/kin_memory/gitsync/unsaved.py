"""A sync into a memory an editor holds with unsaved changes: the buffer was made from what the file held
before the sync (`base`), the sync wrote another machine's change (`theirs`). Saving the buffer as it is
would write the old text over that change, and the next sync would send the loss out.

The language server merges the change into the buffer when the two do not touch the same lines
(merge_text, git's own three-way file merge); when they do, or the editor refused the edit, the buffer is
left as the person typed it. Either way the save is checked (settle_save): a saved file that no longer
holds the synced change records a conflict (KM800) with both versions, so the person chooses; nothing is
lost without a word. Plain Python: the LSP shell calls it and publishes what it says.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..store import sync_trust
from ..store.machine import Machine, MachineError, this_machine
from ..store.paths import rel_of_virtual
from . import files, git, objects, repo
from .records import ConflictRecord, RecordVersion, encode, find, record_rel
from .report import ANOTHER


@dataclass(frozen=True)
class Behind:
    """A buffer a sync wrote under: what it was made from, what came in, and from which machine."""

    vpath: str
    base: bytes
    theirs: bytes
    machine: str


def merge_text(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """Both sides' changes to base in one text; None when they touch the same lines (or git cannot)."""
    if ours == base or ours == theirs:
        return theirs
    if theirs == base:
        return ours
    with tempfile.TemporaryDirectory(prefix="kin-merge-") as folder:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = os.path.join(folder, name)
            with open(path, "wb") as out:
                out.write(data)
            names.append(path)
        try:
            done = git.run(None, ["merge-file", "-p", "-q", *names], what="Merging into the buffer",
                           ok=range(0, 128), cwd=Path(folder))  # fmt: skip
        except git.SyncError:
            return None
    return done.out if done.code == 0 else None


def settle_save(root: Path, behind: Behind, saved: bytes | None) -> bool:
    """After the buffer was saved: True when the saved file dropped the synced change (then a conflict
    is on record, the file keeping what was saved); False when the save kept it (or there is nothing to
    check: the file is gone, or a conflict is already on record)."""
    if saved is None or find(root, behind.vpath) is not None:
        return False
    if merge_text(behind.base, saved, behind.theirs) == saved:
        return False  # the change that came in is in what was saved
    try:
        me = this_machine(root)
    except MachineError:
        return False
    other = _machine(root, behind, me)
    record = ConflictRecord(
        behind.vpath, "overlap", me.name, me.id,
        (RecordVersion(me.name, me.id, saved), RecordVersion(other.name, other.id, behind.theirs)),
        time.time(),
    )  # fmt: skip
    data = encode(record)
    rel = record_rel(behind.vpath)
    fd = files.open_parent(root, rel, create=True)
    if fd is None:
        return False
    try:
        _old, st = files.read_at(fd, files.name_of(rel))
        files.put_at(fd, files.name_of(rel), data, st)
    finally:
        os.close(fd)
    vouched, accepted = sync_trust.read(root)
    sync_trust.write(root, list(vouched), {**accepted, rel: sync_trust.digest(data)})
    return True


def _machine(root: Path, behind: Behind, me: Machine) -> Machine:
    """The machine whose commit brought the change (its id names it in the record)."""
    rel = rel_of_virtual(behind.vpath)
    with contextlib.suppress(git.SyncError, OSError):
        head = repo.head(root)
        touches = objects.authors(root, None, head, paths=[rel]).get(rel, []) if head and rel else []
        for touch in touches:
            if touch.machine is not None and touch.machine.id != me.id:
                return touch.machine
    return Machine("", behind.machine or ANOTHER)
