"""After the tool renames or moves a memory (or a folder): MEMORY.md's links and other memories'
`/memories/…` references follow it, as part of the same call. Each file is edited like a `str_replace`
(re-read under the store lock, a file changed meanwhile is left alone, an open editor buffer gets the
edit through the editor) and its previous version is kept. Files that are not UTF-8 are left alone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..findings.edits import apply_edits
from ..findings.relink import mentions, relink
from ..store.memory import MAX_READ_BYTES
from ..store.paths import rel_of_virtual
from ..store.store import scan
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


def follow_rename(ctx: ToolContext, old: str, new: str) -> list[str]:
    """Rewrite every link and reference to `old` so it names `new`; the memories changed."""
    planned = []
    needles = (old.encode(), rel_of_virtual(old).encode())
    for path, vpath, is_index in scan(ctx.root)[0]:
        if not _names(path, needles):
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
    with around_write(ctx.root, [t.virtual for t, *_ in planned], ctx.source):
        for t, st, text, new_text in planned:
            try:
                commit_edit(t, st, text, new_text, ctx)
            except ToolFailure:  # changed meanwhile, or an editor with unsaved changes: left as it is
                continue
            done.append(t.virtual)
    return done
