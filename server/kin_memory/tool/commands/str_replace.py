"""`str_replace`: replace the one occurrence of old_str; none or several is a failure that changes
nothing. The result shows the edited lines with a little context."""

from __future__ import annotations

from .. import messages
from ..edit_rules import check_edit, match_region
from .base import ToolContext, ToolFailure, confirm
from .params import ToolInput, guarded, str_param
from .view import number_lines
from .writing import commit_edit, read_text, store_lock

SNIPPET_LINES = 2  # lines of context either side of the edit in the result


def _occurrence_lines(text: str, needle: str, start: int = 0) -> list[int]:
    """The line of every occurrence of needle at or after `start`, overlapping ones included and a line
    named once per occurrence, as the SDK's reference tool lists them."""
    found: list[int] = []
    pos = text.find(needle, start)
    while pos != -1:
        found.append(text.count("\n", 0, pos) + 1)
        pos = text.find(needle, pos + 1)
    return found


def _snippet(new_text: str, pos: int, new: str) -> str:
    changed = new_text.count("\n", 0, pos) + 1
    lines = new_text.split("\n")
    first = max(1, changed - SNIPPET_LINES)
    last = changed + SNIPPET_LINES + new.count("\n")
    return number_lines(lines[first - 1 : last], first)


def str_replace(inp: ToolInput, ctx: ToolContext) -> str:
    path = str_param(inp, "str_replace", "path")
    old = str_param(inp, "str_replace", "old_str")
    new = str_param(inp, "str_replace", "new_str", required=False, default="")
    if old == "":
        raise ToolFailure(messages.bad_param("str_replace", "old_str", "a non-empty string"))
    t = guarded(ctx.root, path)
    confirm(ctx, "str_replace", path, f"str_replace in {path}")
    # Read and written under one hold of the store lock: with other writers queued, a read taken
    # before waiting for the lock would be stale by the time of the write (a needless conflict).
    with store_lock(t.root_real):
        text, st = read_text(t, missing=messages.not_found(path))
        start = match_region(text, old)  # the body only, when old_str is found there
        count = text.count(old, start)
        if count == 0:
            raise ToolFailure(messages.no_match(old, path))
        if count > 1:
            raise ToolFailure(messages.multiple(old, _occurrence_lines(text, old, start)))
        pos = text.find(old, start)
        new_text = text[:pos] + new + text[pos + len(old) :]
        check_edit(path, text, new_text, ctx.active)
        commit_edit(t, st, text, new_text, ctx, locked=True)
    return messages.STR_REPLACE_OK_HEADER + _snippet(new_text, pos, new)
