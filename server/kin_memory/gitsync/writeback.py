"""Bringing the store's files to a merged commit, one file at a time, through the product's own writes.

Each file that came in is written with the atomic writer inside `around_write`, labelled
`sync:<machine>` (the machine whose commit made the change), so history keeps the version it replaces
and the review queue shows where the change came from. A file is replaced (or deleted) only while it
still holds exactly what this machine committed moments before: a file changed here since is left as it
is, said so, and goes out with the next sync.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..store.atomic import Changed
from ..store.paths import is_hidden, virtual_of_rel
from ..store.write_hook import around_write
from . import commitset, files, git, objects
from .report import ANOTHER, Change, ChangeKind

SOURCE = "sync"  # the source of a change whose commit names no machine
CHANGED_HERE = "was changed here while the sync ran: it was left as it is and goes out with the next sync."
_KIND: dict[str, ChangeKind] = {"A": "create", "D": "delete"}


@dataclass
class Brought:
    incoming: list[Change] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    arrived: list[str] = field(default_factory=list)  # hidden paths that came in (conflict records)
    changed_here: list[str] = field(default_factory=list)  # paths left alone: changed here meanwhile


def source_of(touches: list[objects.Touch] | None, final: str | None) -> tuple[str, str]:
    """(history's source label, the machine's name) for a change that came in."""
    machine = objects.who(touches, final)
    return (f"{SOURCE}:{machine.name}", machine.name) if machine is not None else (SOURCE, ANOTHER)


def skipped_sentence(rel: str) -> str:
    return f"{virtual_of_rel(rel)} {CHANGED_HERE}"


def bring(root: Path, local: str | None, final: str, touched: dict[str, list[objects.Touch]]) -> Brought:
    """Write every file that differs between local (what this machine committed) and final; a file that
    already holds its final content is left alone (and still reported as come in)."""
    out = Brought()
    deltas = objects.changes(root, local, final)
    held = objects.blobs(root, [oid for d in deltas if _takes(d) for oid in d.files()])
    for delta in deltas:
        shown = virtual_of_rel(delta.rel)
        if commitset.limit_of(delta.rel) is None:
            if commitset.quiet(delta.rel):
                continue
            out.skipped.append(
                f"{shown} came in but is not a place in the store a sync writes: it was left out."
            )
            continue
        if delta.new is not None and not delta.new_mode.startswith("100"):
            out.skipped.append(f"{shown} came in as a link or a repository, not a file: it was left out.")
            continue
        source, name = source_of(touched.get(delta.rel), delta.new)
        problem = _apply(root, delta, source, held, *objects.when(touched.get(delta.rel), delta.new))
        if problem == CHANGED_HERE:
            out.changed_here.append(delta.rel)
        elif problem is not None:
            out.skipped.append(f"{shown} {problem}")
        elif is_hidden(tuple(delta.rel.split("/"))):
            out.arrived.append(delta.rel)
        else:
            out.incoming.append(Change(shown, _KIND.get(delta.status, "edit"), name))
    return out


def _takes(delta: objects.Delta) -> bool:
    return commitset.limit_of(delta.rel) is not None


def _apply(
    root: Path, delta: objects.Delta, source: str, held: dict[str, bytes], mtime: float | None, exact: bool
) -> str | None:
    """Write one change; why it was not written (the end of a sentence), None when it was.

    A version no single change made (a merge of both sides) takes the newer of the incoming time and
    the replaced file's own: each machine replaces its own side, so both land on the same, newer time."""
    expected = held.get(delta.old) if delta.old is not None else None
    data = held.get(delta.new) if delta.new is not None else None
    try:
        fd = files.open_parent(root, delta.rel, create=data is not None)
        if fd is None:
            return None  # a folder on the way is gone: so is the file to delete
        try:
            current, st = files.read_at(fd, files.name_of(delta.rel))
            if current == data:
                return None  # already there (written by hand, or by a sync that stopped half-way)
            if current != expected:
                return CHANGED_HERE
            with around_write(root, files.hooked(delta.rel), source):
                if data is None:
                    files.drop_at(fd, files.name_of(delta.rel))
                else:
                    files.put_at(fd, files.name_of(delta.rel), data, st)
                    if not exact and st is not None and current is not None:
                        mtime = max(mtime or 0.0, min(st.st_mtime, time.time()))
                    if mtime is not None:  # its age on the machine it came from (the lifecycle reads it)
                        os.utime(files.name_of(delta.rel), (mtime, mtime), dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)
    except (Changed, FileExistsError):
        return CHANGED_HERE
    except files.NotAFile:
        return "came in but a link or a folder is in its place here: it was left out."
    except OSError as exc:
        return f"could not be written ({exc.strerror or 'an error of the disk'}): it goes again with the next sync."
    if data is None:
        files.prune_empty(root, delta.rel)
    return None


def move_branch(root: Path, ref: str, new: str, old: str | None) -> None:
    """Point the branch at the merged commit (only if it is still where this sync left it) and make the
    index match it, so `git status` shows only what is still to go out."""
    git.run(root, ["update-ref", "-m", "kin-memory sync", ref, new, old or ""], what="Recording the merge")
    git.run(root, ["read-tree", new], what="Recording the merge")
    git.run(root, ["update-index", "-q", "--refresh"], what="Recording the merge", ok=(0, 1))
