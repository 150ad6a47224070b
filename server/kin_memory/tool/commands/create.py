"""`create`: a new file, never over an existing one; a memory file gets the write-time rules
(category rewrite, workspace stamp) first."""

from __future__ import annotations

import os

from kin_memory.store.paths import is_memory_rel
from kin_memory.store.store import MAX_DEPTH, folder_too_deep

from ...store.atomic import create_at, make_dirs
from .. import messages
from ..edit_rules import check_create
from ..write_rules import added_note
from ..write_rules import apply as apply_write_rules
from . import writing
from .base import ToolContext, ToolFailure, check_cancelled, confirm
from .params import ToolInput, guarded, str_param


def create(inp: ToolInput, ctx: ToolContext) -> str:
    path = str_param(inp, "create", "path")
    text = str_param(inp, "create", "file_text")
    t = guarded(ctx.root, path)
    if folder_too_deep(t.content.dir_parts):  # the scan would never see it, and deep trees hurt walks
        raise ToolFailure(messages.too_deep(path, MAX_DEPTH))
    writing.within_limit(t, text)  # refused before anyone is asked
    note = None
    if is_memory_rel(t.parts):  # a text the store could not read, or a stamp it cannot use: refused first
        given, text = text, apply_write_rules(text, ctx.workspace)
        check_create(path, text, ctx.active)
        note = added_note(given, text)
    confirm(ctx, "create", path, f"create {path}")
    if t.is_root or os.path.lexists(t.lexical):
        raise ToolFailure(messages.create_exists(path))
    data = writing.within_limit(t, text)  # the stamp the rules add counts too
    try:
        make_dirs(t.root_real)  # the root itself is trusted; everything below goes through the guard
    except OSError:
        raise ToolFailure(messages.os_error(path, "create")) from None
    writing.before_write(t.resolved)
    check_cancelled(ctx, "create", path)
    place = t.content
    dir_fd = writing.open_place_dir(t, place.dir_parts, "create", create=True)
    try:
        create_at(dir_fd, place.name, data)
    except FileExistsError:  # made by someone else since the check: still never overwritten
        raise ToolFailure(messages.create_exists(path)) from None
    except OSError:
        raise ToolFailure(messages.os_error(path, "create")) from None
    finally:
        os.close(dir_fd)
    return messages.create_ok(path) if note is None else f"{messages.create_ok(path)}. {note}"
