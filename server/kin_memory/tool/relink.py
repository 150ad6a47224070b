"""After the tool renames or moves a memory (or a folder): MEMORY.md's links and other memories'
`/memories/…` references follow it, as part of the same call. Each file is edited like a `str_replace`
(re-read under the store lock, a file changed meanwhile is left alone, an open editor buffer gets the
edit through the editor) and its previous version is kept. Files that are not UTF-8 are left alone."""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..findings.edits import apply_edits
from ..findings.relink import mentions, relink
from ..store.categories import SESSION
from ..store.memory import BODY_CAP, MAX_READ_BYTES
from ..store.paths import rel_of_virtual
from ..store.scan import scan_names
from ..store.write_hook import around_write
from .commands.base import ToolContext, ToolFailure
from .commands.writing import commit_edit, read_text
from .guard import GuardError, resolve

_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def _names(path: Path, needles: tuple[bytes, ...]) -> bool:
    """A cheap first look (most files never name the renamed path): the file as the scan listed it, a
    regular file read up to its size (at most MAX_READ_BYTES); the edit itself reads it through the guard."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False
        data = os.read(fd, min(st.st_size, MAX_READ_BYTES) + 1)
    except OSError:
        return False
    finally:
        os.close(fd)
    return any(n in data for n in needles)


def _need_reading(root: Path, old: str) -> Callable[[str, str, bool], bool]:
    """Which memories a rename must read to find references to `old`: with a recall index, only MEMORY.md
    (its links are relative), the memories whose indexed body holds the path's words, and those the
    index did not see as they are now (new, changed: the freshness key decides; a body past the indexed
    cap; a session, whose body is not indexed). So a rename reads a handful of files, not the store.
    Without an index, every memory."""
    from ..store.freshness import key_at, unchanged
    from ..store.index_hooks import mentioning

    known = mentioning(root, old)
    if known is None:
        return lambda _path, _vpath, _is_index: True
    hits, rows = known

    def need(path: str, vpath: str, is_index: bool) -> bool:
        if is_index or vpath in hits:
            return True
        row = rows.get(vpath)
        if row is None or row[1] > BODY_CAP or row[2] == SESSION:
            return True
        return not unchanged(row[0], key_at(path))

    return need


def _may_name(ctx: ToolContext, root: Path, old: str) -> list[tuple[str, str, bool]]:
    """The files that may refer to `old`: what the caller can tell (a watched store), else those of the
    store's listing that the index cannot rule out."""
    told = ctx.rename_reads(old) if ctx.rename_reads is not None else None
    if told is not None:
        return told
    need = _need_reading(root, old)
    return [f for f in scan_names(root)[0] if need(*f)]


def follow_rename(ctx: ToolContext, old: str, new: str) -> list[str]:
    """Rewrite every link and reference to `old` so it names `new`; the memories changed."""
    planned = []
    needles = (old.encode(), rel_of_virtual(old).encode())
    root = Path(os.path.realpath(ctx.root))
    for path, vpath, is_index in _may_name(ctx, root, old):
        if not _names(Path(path), needles):
            continue
        try:
            t = resolve(ctx.root, vpath)
            text, st = read_text(t, missing="")
        except (GuardError, ToolFailure):
            continue
        if not mentions(text, old):
            continue
        edits = relink(vpath, text, old, new, is_index=is_index)
        if edits:
            planned.append((t, st, text, apply_edits(text, edits)))
    done = []
    ctx = dataclasses.replace(ctx, cancelled=None)  # part of a rename that was made: it completes
    with around_write(ctx.root, [t.virtual for t, *_ in planned], ctx.source):
        for t, st, text, new_text in planned:
            try:
                commit_edit(t, st, text, new_text, ctx)
            except ToolFailure:  # changed meanwhile, or an editor with unsaved changes: left as it is
                continue
            done.append(t.virtual)
    return done
