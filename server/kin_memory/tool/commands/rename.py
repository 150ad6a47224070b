"""`rename`: move a file or folder to a path that does not exist yet; nothing is ever replaced."""

from __future__ import annotations

import os

from kin_memory.store.paths import virtual_of_rel
from kin_memory.store.store import MAX_DEPTH, folder_too_deep

from ...store.atomic import rename_at
from .. import messages
from ..guard import Target
from ..tree import deeper_than
from . import writing
from .base import ToolContext, ToolFailure, confirm
from .params import ToolInput, guarded, str_param


def _check(old: Target, new: Target, old_path: str, new_path: str) -> None:
    if not os.path.lexists(old.lexical):
        raise ToolFailure(messages.rename_missing(old_path))
    if new.is_root or os.path.lexists(new.lexical):
        raise ToolFailure(messages.rename_exists(new_path))
    src, dst = old.entry, new.content
    src_parts = (*src.dir_parts, src.name)
    if (*dst.dir_parts, dst.name)[: len(src_parts)] == src_parts:
        # into its own subtree: refuse before creating any folder on the way
        raise ToolFailure(messages.os_error(f"{old_path} to {new_path}", "rename"))
    if _too_deep_after_move(old, new):
        raise ToolFailure(messages.too_deep(new_path, MAX_DEPTH))


def _too_deep_after_move(old: Target, new: Target) -> bool:
    """Whether the moved entry, or a folder inside it, would land past the scan's nesting limit: moving
    folders into one another is as good a way as create to build a tree too deep to walk."""
    dst_dirs = new.content.dir_parts
    if folder_too_deep(dst_dirs):
        return True
    if not os.path.isdir(old.lexical) or os.path.islink(old.lexical):
        return False  # a file, or a link (moved as a link: nothing is walked through it)
    depth = len(dst_dirs) + 1  # the folder itself, once moved
    return folder_too_deep((*dst_dirs, new.content.name)) or deeper_than(
        os.fspath(old.lexical), MAX_DEPTH - depth
    )


def _move(old: Target, new: Target, old_path: str, new_path: str) -> None:
    src, dst = old.entry, new.content
    src_fd = writing.open_place_dir(old, src.dir_parts, "rename")
    try:
        dst_fd = writing.open_place_dir(new, dst.dir_parts, "rename", create=True)
        try:
            rename_at(src_fd, src.name, dst_fd, dst.name)
        except FileExistsError:
            raise ToolFailure(messages.rename_exists(new_path)) from None
        except FileNotFoundError:
            raise ToolFailure(messages.vanished(old_path)) from None
        except OSError:
            raise ToolFailure(messages.os_error(f"{old_path} to {new_path}", "rename")) from None
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)


def rename(inp: ToolInput, ctx: ToolContext) -> str:
    old_path = str_param(inp, "rename", "old_path")
    new_path = str_param(inp, "rename", "new_path")
    old = guarded(ctx.root, old_path)
    if old.is_root:
        raise ToolFailure(messages.RENAME_ROOT)
    new = guarded(ctx.root, new_path)
    confirm(ctx, "rename", old_path, f"rename {old_path} to {new_path}")
    _check(old, new, old_path, new_path)
    writing.before_write(old.lexical)
    _move(old, new, old_path, new_path)
    from ..relink import follow_rename  # links to it follow (late: relink imports these commands)

    follow_rename(ctx, virtual_of_rel("/".join(old.parts)), virtual_of_rel("/".join(new.parts)))
    return messages.rename_ok(old_path, new_path)
