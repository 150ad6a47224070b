"""Applying a proposal: exactly the reviewed bytes, through the tool's guard and atomic writes, audited.

No model is asked anything here. Changes are chosen by their index in the proposal, never by path (a
rename and a create may share one). Each chosen change is checked first: a file whose bytes are no longer
those the proposal was computed from, a create whose target now exists, or a memory that is not visible
from the workspace applying it (whatever the proposal file says: it lies in the hidden folder, where
anything can be planted), is a conflict and is left untouched; the other changes still apply.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..store.atomic import create_at, make_dirs, remove_at, rename_at, write_at
from ..store.memory import MAX_READ_BYTES, from_text
from ..store.paths import real_path
from ..store.reader import Refused, read_file
from ..store.workspace import visibility
from ..store.write_hook import around_write
from ..tool import audit
from ..tool.guard import GuardError, open_dir, resolve
from .model import Proposal, ProposedChange, sha256


@dataclass
class ApplyResult:
    applied: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    applied_changes: list[int] = field(default_factory=list)  # the indices of the changes applied


class SelectionError(ValueError):
    """A selection that names no change of the proposal; the message is a sentence."""


def chosen(proposal: Proposal, indices: Collection[int] | None) -> list[tuple[int, ProposedChange]]:
    """The changes at these indices (0-based, in the proposal's order), each once; all when None.
    Raises SelectionError for an index the proposal does not have."""
    if indices is None:
        return list(enumerate(proposal.changes))
    count = len(proposal.changes)
    wrong = [i for i in indices if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < count]
    if wrong:
        raise SelectionError(
            f"the proposal has {count} change{'s' if count != 1 else ''} (0 to {count - 1}): "
            f"{str(wrong[0])[:40]} is none of them"
        )
    return [(i, proposal.changes[i]) for i in sorted(set(indices))]


def apply_proposal(
    root: Path, proposal: Proposal, indices: Collection[int] | None = None, *, active: tuple[str, ...] = ()
) -> ApplyResult:
    """Apply the chosen changes as the workspaces `active` see the store (() is the operator's view)."""
    root = Path(os.path.realpath(root))
    result = ApplyResult()
    for index, change in chosen(proposal, indices):
        shown = change.new_path or change.path
        reason = conflict_of(root, change, active)
        if reason is None:
            try:
                with around_write(
                    root, [change.path, change.new_path], "proposal"
                ):  # the previous version first
                    _write(root, change)
            except GuardError as exc:
                reason = exc.message
            except OSError as exc:
                reason = f"the {change.kind} failed: {exc.strerror or 'the file system refused it'}"
        label = f"proposal-{proposal.id}-{change.kind}"
        if reason is None:
            result.applied.append(shown)
            result.applied_changes.append(index)
            audit.record(root, label, [p for p in (change.path, change.new_path) if p], "ok")
        else:
            result.conflicts.append((shown, reason))
            audit.record(root, label, [change.path], "conflict")
    return result


def _current(root: Path, vpath: str) -> bytes | None:
    """The file's bytes now (None when absent): bounded, never through a link out of the store, never
    blocking on a FIFO planted in its place (that reads as "changed": a conflict)."""
    try:
        return read_file(real_path(root, vpath), MAX_READ_BYTES, within=root).data
    except FileNotFoundError:
        return None
    except (Refused, OSError):
        return b"\0unreadable"  # hashes to nothing a proposal was computed from


def as_on_disk(root: Path, proposal: Proposal) -> Proposal:
    """The proposal with every change's `before` read from the file on disk now, so the diff the user
    reviews is against what applying checks (its bytes must still hash to `before_sha256`), not a text a
    planted proposal file could set to anything."""
    root = Path(os.path.realpath(root))
    changes = []
    for change in proposal.changes:
        if change.kind != "create":
            current = _current(root, change.path)
            change = replace(change, before=None if current is None else current.decode("utf-8", "replace"))
        changes.append(change)
    return replace(proposal, changes=tuple(changes))


def conflict_of(root: Path, change: ProposedChange, active: tuple[str, ...]) -> str | None:
    """Why this change may not be written now, or None."""
    current = _current(root, change.path)
    if change.kind == "create":
        if current is not None or os.path.lexists(real_path(root, change.path)):
            return "the file was created meanwhile; nothing was overwritten"
    elif sha256(current) != change.before_sha256:
        return "the file changed since the proposal was made; it was left as it is"
    if change.kind == "rename" and change.new_path and os.path.lexists(real_path(root, change.new_path)):
        return f"{change.new_path} exists now; nothing was overwritten"
    # The file as it is now (what the sha just matched) and what would be written, against the workspace
    # applying: never the proposal's own `workspace` or `before`, which a planted file may set to anything.
    now_text = None if current is None else current.decode("utf-8", "replace")
    for text in (now_text, change.after):
        if text is not None and not visibility(_stamp(root, change.path, text), active).visible:
            return "the memory belongs to another workspace"
    return None


def _stamp(root: Path, vpath: str, text: str) -> object:
    return from_text(real_path(root, vpath), vpath, text, 0.0, len(text)).stamp


def _write(root: Path, change: ProposedChange) -> None:
    target = resolve(root, change.path)
    if target.is_root:
        raise GuardError("refusing to change /memories itself")
    if change.kind == "create":
        make_dirs(root)
        _in_dir(
            root,
            target.content.dir_parts,
            True,
            lambda fd: create_at(fd, target.content.name, change.after_bytes or b""),
        )
    elif change.kind == "edit":
        _in_dir(
            root,
            target.content.dir_parts,
            False,
            lambda fd: write_at(fd, target.content.name, change.after_bytes or b""),
        )
    elif change.kind == "delete":
        _in_dir(root, target.entry.dir_parts, False, lambda fd: remove_at(fd, target.entry.name))
        _prune_empty(root, target.entry.dir_parts)
    elif change.kind == "rename" and change.new_path:
        dest = resolve(root, change.new_path)

        def move(src_fd: int) -> None:
            _in_dir(root, dest.content.dir_parts, True,
                    lambda dst_fd: rename_at(src_fd, target.entry.name, dst_fd, dest.content.name))  # fmt: skip

        _in_dir(root, target.entry.dir_parts, False, move)


def _prune_empty(root: Path, parts: tuple[str, ...]) -> None:
    """Folders a delete left empty go too (a deleted folder of memories is proposed file by file)."""
    while parts:
        try:
            _in_dir(root, parts[:-1], False, functools.partial(_rmdir_at, parts[-1]))
        except OSError:  # not empty (or already gone): stop here
            return
        parts = parts[:-1]


def _rmdir_at(name: str, dir_fd: int) -> None:
    os.rmdir(name, dir_fd=dir_fd)


def _in_dir(root: Path, parts: tuple[str, ...], create: bool, action: Callable[[int], None]) -> None:
    """Run `action` on the folder's descriptor, opened through the guard (no link followed)."""
    fd = open_dir(root, parts, create=create)
    try:
        action(fd)
    finally:
        os.close(fd)
