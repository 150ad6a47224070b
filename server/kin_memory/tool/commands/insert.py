"""`insert`: a line of text after line `insert_line` (0 inserts before the first line)."""

from __future__ import annotations

from .. import messages
from ..edit_rules import check_edit
from .base import ToolContext, ToolFailure, confirm
from .params import ToolInput, guarded, int_param, str_param
from .writing import commit_edit, read_text, store_lock


def insert(inp: ToolInput, ctx: ToolContext) -> str:
    path = str_param(inp, "insert", "path")
    n = int_param(inp, "insert", "insert_line")
    insert_text = str_param(inp, "insert", "insert_text")
    t = guarded(ctx.root, path)
    confirm(ctx, "insert", path, f"insert into {path} at line {n}")
    with store_lock(t.root_real):  # read and written under one hold of the lock (see str_replace)
        text, st = read_text(t, missing=messages.not_found(path))
        lines = text.split("\n")
        if lines and lines[-1] == "":  # the final newline ends the last line, it does not start another
            lines.pop()
        if n < 0 or n > len(lines):
            raise ToolFailure(messages.bad_insert_line(n, len(lines)))
        piece = insert_text[:-1] if insert_text.endswith("\n") else insert_text
        new_text = "\n".join(lines[:n] + [piece] + lines[n:]) + "\n"
        check_edit(path, text, new_text, ctx.active, insert_line=n)
        commit_edit(t, st, text, new_text, ctx, locked=True)
    return messages.insert_ok(path)
