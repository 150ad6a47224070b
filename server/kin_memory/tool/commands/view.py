"""`view`: a folder's listing, or a file's lines numbered like `cat -n` (optionally a range of them)."""

from __future__ import annotations

import os

from .. import audit, messages
from ..guard import Target
from .base import ToolContext, ToolFailure
from .listing import listing
from .params import ToolInput, guarded, str_param, view_range_param
from .writing import read_text

MAX_LINES = 999_999


def number_lines(lines: list[str], start: int) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, start))


def _view_file(t: Target, path: str, view_range: tuple[int, int] | None) -> str:
    text, _ = read_text(t, missing=messages.not_found(path))
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        raise ToolFailure(messages.too_many_lines(path))
    start = 1
    if view_range is not None:
        first, last = view_range
        start = max(1, first)
        lines = lines[start - 1 :] if last == -1 else lines[start - 1 : last]
    return messages.file_header(path) + "\n" + number_lines(lines, start)


def view(inp: ToolInput, ctx: ToolContext) -> str:
    path = str_param(inp, "view", "path")
    t = guarded(ctx.root, path)
    real = os.fspath(t.resolved)
    if not os.path.lexists(real):
        if t.is_root:  # a store not created yet lists as empty
            return listing(t)
        raise ToolFailure(messages.not_found(path))
    if os.path.isdir(real):
        return listing(t)
    if not os.path.isfile(real):
        raise ToolFailure(messages.unsupported(path))
    view_range = view_range_param(inp)
    outcome = "error"
    try:
        text = _view_file(t, path, view_range)
        outcome = "ok"
        return text
    finally:
        # reading a memory's body is audited like a mutation; folder listings are not
        audit.record(t.root_real, "view", [path], outcome)
