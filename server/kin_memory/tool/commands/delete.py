"""`delete`: a file, a link (not what it points at) or a whole folder; never the root itself."""

from __future__ import annotations

import os

from ...store.atomic import remove_at
from .. import messages
from . import writing
from .base import ToolContext, ToolFailure, confirm
from .params import ToolInput, guarded, str_param


def delete(inp: ToolInput, ctx: ToolContext) -> str:
    path = str_param(inp, "delete", "path")
    t = guarded(ctx.root, path)
    if t.is_root:
        raise ToolFailure(messages.DELETE_ROOT)
    confirm(ctx, "delete", path, f"delete {path}")
    if not os.path.lexists(t.lexical):
        raise ToolFailure(messages.delete_missing(path))
    writing.before_write(t.lexical)
    place = t.entry
    dir_fd = writing.open_place_dir(t, place.dir_parts, "delete")
    try:
        remove_at(dir_fd, place.name)
    except FileNotFoundError:
        raise ToolFailure(messages.vanished(path)) from None
    except OSError:
        raise ToolFailure(messages.os_error(path, "delete")) from None
    finally:
        os.close(dir_fd)
    return messages.delete_ok(path)
