"""Which memories a tool call may reach: the workspace filter of search and the prompt block, held in the
memory tool too.

An agent working in repository B must not read, edit, move or delete repository A's memories through the
tool, and must not plant a fact stamped with A's path. A memory of another workspace therefore answers
every command exactly as a missing path does, and a folder listing leaves it out. The rule itself is
`store.workspace.visibility`, the one every door uses; this module only reads a file's stamp for it. The
operator's view (no active workspace) reaches everything.

A folder that holds memories of another workspace cannot be deleted or moved as a whole (that would
delete or move them too); the refusal says so without naming them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..store.frontmatter import parse_frontmatter, split_lines, workspace_stamp
from ..store.memory import BODY_CAP
from ..store.reader import Refused, read_file
from ..store.workspace import stamp_kind, visibility

MAX_WALK = 100_000  # files looked at below one folder before it is taken as holding hidden ones


def stamp_in(text: str) -> object:
    """The raw `workspace` value of a memory's text (None when it has none), read as the store reads it
    (store.memory.from_text): a broken frontmatter's stamp line still places it."""
    fm = parse_frontmatter(text)
    return workspace_stamp(split_lines(text), fm)


def stamp_of(real: str) -> object:
    """The stamp of the file at `real` (already resolved by the guard); None when it cannot be read: the
    command itself then reports why it cannot use the file."""
    try:
        head = read_file(Path(real), BODY_CAP, truncate=True).data
    except (Refused, OSError):
        return None
    return stamp_in(head.decode("utf-8", "replace"))


def visible(real: str, active: tuple[str, ...]) -> bool:
    """Whether the file at `real` may be reached from `active` (always, in the operator's view)."""
    if not active:
        return True
    return visibility(stamp_of(real), active).visible


def is_file(real: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(real, follow_symlinks=False).st_mode)
    except OSError:
        return False


def holds_hidden(folder: str, active: tuple[str, ...]) -> bool:
    """Whether any memory below `folder` belongs to another workspace (links are not followed)."""
    if not active:
        return False
    pending, seen = [folder], 0
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                seen += 1
                if seen > MAX_WALK or not visible(entry.path, active):
                    return True
    return False


def foreign_stamp(stamp: object, active: tuple[str, ...]) -> bool:
    """Whether a write may not carry this stamp: one the writing workspace does not see (another
    repository's path, or a label that is not active: the memory would vanish from its writer the moment
    it is written). `global` is always fine; the operator's view may write any stamp. A stamp no
    workspace can use at all (not a string, hostile) is the edit rules' to refuse."""
    if not active or not isinstance(stamp, str) or stamp_kind(stamp) not in ("path", "label"):
        return False
    # `<this repository>/.` or a folder inside it is this repository (store.workspace.visibility)
    return not visibility(stamp, active).visible
