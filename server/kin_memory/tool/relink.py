"""After the tool renames or moves a memory (or a folder): MEMORY.md's links and other memories'
`/memories/…` references follow it, as part of the same call. Each file is edited like a `str_replace`
(re-read under the store lock, a file changed meanwhile is left alone, an open editor buffer gets the
edit through the editor) and its previous version is kept. Files that are not UTF-8 are left alone."""

from __future__ import annotations

from ..history.versions import kept
from ..proposals.bulk import apply_edits
from ..store.relink import mentions, relink
from ..store.store import scan
from .commands.base import ToolContext, ToolFailure
from .commands.writing import commit_edit, read_text
from .guard import GuardError, resolve


def follow_rename(ctx: ToolContext, old: str, new: str) -> list[str]:
    """Rewrite every link and reference to `old` so it names `new`; the memories changed."""
    planned = []
    for _path, vpath, is_index in scan(ctx.root)[0]:
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
    with kept(ctx.root, [t.virtual for t, *_ in planned], ctx.source):
        for t, st, text, new_text in planned:
            try:
                commit_edit(t, st, text, new_text, ctx)
            except ToolFailure:  # changed meanwhile, or an editor with unsaved changes: left as it is
                continue
            done.append(t.virtual)
    return done
