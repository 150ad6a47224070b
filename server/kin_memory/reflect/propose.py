"""A reflection pass's outcome as a proposal: every staged change with its exact bytes before and after.

A change touching a memory the pass's workspace cannot see is dropped here (the staging copy should not
offer such memories at all; this is the second line), and applying re-checks it once more.

A deleted folder is proposed file by file, each read through the bounded reader: a FIFO, a device or a
file too large to be a memory in it is never read (a FIFO would block the pass for ever); it is left in
place and the summary says so.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..proposals.model import ChangeKind, Proposal, ProposedChange, proposed
from ..proposals.store import new_id
from ..sinks.prompt import field as one_line
from ..store.memory import MAX_READ_BYTES
from ..store.paths import real_path, virtual_path
from ..store.reader import Refused, read_file
from ..store.workspace import visibility
from .changes import Change
from .run import Outcome


def proposal_of(root: Path, outcome: Outcome, workspace: str | None, source: str = "reflect") -> Proposal:
    changes: list[ProposedChange] = []
    unread: list[tuple[str, str]] = []  # (virtual path, why) of files in a deleted folder left as they are
    for change in outcome.changes:
        changes += _proposed(root, change, unread)
    active = (workspace,) if workspace else ()
    kept = [c for c in changes if _visible(c, active)]
    summary = outcome.summary
    if len(kept) < len(changes):
        dropped = len(changes) - len(kept)
        summary += f" {dropped} change{'s' if dropped != 1 else ''} to another workspace's memories left out."
    if unread:
        summary += (
            " Not read, left in place: " + ", ".join(f"{one_line(v)} ({why})" for v, why in unread) + "."
        )
    return Proposal(id=new_id(), source=source, summary=summary, created=time.time(), workspace=workspace,
                    changes=tuple(kept), tool_calls=outcome.tool_calls)  # fmt: skip


def _proposed(root: Path, c: Change, unread: list[tuple[str, str]]) -> list[ProposedChange]:
    if c.kind == "delete" and c.is_dir:  # a folder: each memory in it, so each is reviewed and checked
        return [proposed("delete", vpath, data, None) for vpath, data in _files_below(root, c.path, unread)]
    if c.kind == "rename":
        return [proposed("rename", c.old_path or "", c.before, c.before, new_path=c.path)]
    kind: ChangeKind = "create" if c.kind == "create" else "edit" if c.kind == "edit" else "delete"
    return [proposed(kind, c.path, c.before, c.after)]


def _files_below(root: Path, vpath: str, unread: list[tuple[str, str]]) -> list[tuple[str, bytes]]:
    """(virtual path, bytes) of every regular file below the folder; links are not followed, anything
    the bounded reader refuses goes to `unread` with its reason."""
    out = []
    for folder, dirs, files in os.walk(real_path(root, vpath), followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(f for f in files if not f.startswith(".")):
            path = Path(folder) / name
            if path.is_symlink():
                continue
            try:
                out.append((virtual_path(root, path), read_file(path, MAX_READ_BYTES, within=root).data))
            except Refused as exc:
                unread.append((virtual_path(root, path), exc.reason))
            except OSError as exc:
                if not isinstance(exc, FileNotFoundError):  # gone meanwhile: nothing left to delete
                    unread.append((virtual_path(root, path), f"unreadable: {exc.strerror or 'error'}"))
    return out


def _visible(change: ProposedChange, active: tuple[str, ...]) -> bool:
    from ..store.memory import from_text

    for text in (change.before, change.after):
        if text is not None:
            stamp = from_text(Path(change.path), change.path, text, 0.0, len(text)).stamp
            if not visibility(stamp, active).visible:
                return False
    return True
