"""Before a command runs: may this call reach the memories it names from the active workspace?

The rule is tool/visibility.py's. A memory of another workspace answers as a missing path does, in each
command's own words; a folder holding one cannot be deleted or moved whole. What a written text may
carry is the edit rules' (edit_rules.py: create and every edit check what they would write).
"""

from __future__ import annotations

import os

from .. import messages
from ..guard import GuardError, Target, resolve
from ..visibility import holds_hidden, is_file, visible
from .base import ToolContext, ToolFailure
from .params import ToolInput

MISSING = {
    "view": messages.not_found,
    "str_replace": messages.not_found,
    "insert": messages.not_found,
    "delete": messages.delete_missing,
    "rename": messages.rename_missing,
}


def _target(ctx: ToolContext, value: object) -> Target | None:
    """The guarded target, or None: a path the guard refuses is left to the command to report."""
    if not isinstance(value, str):
        return None
    try:
        return resolve(ctx.root, value)
    except GuardError:
        return None


def _hidden_file(t: Target, active: tuple[str, ...]) -> bool:
    real = os.fspath(t.resolved)
    return is_file(real) and not visible(real, active)


def check(command: str, inp: ToolInput, ctx: ToolContext) -> None:
    """Raises the failure the command answers with when the call reaches beyond the active workspace."""
    active = ctx.active
    if not active:
        return  # the operator's view reaches everything
    key = "old_path" if command == "rename" else "path"
    t = _target(ctx, inp.get(key))
    if t is None or t.is_root:
        return
    if command in MISSING and _hidden_file(t, active):
        raise ToolFailure(MISSING[command](t.virtual))
    if command in ("delete", "rename") and os.path.isdir(t.lexical) and not os.path.islink(t.lexical):
        if holds_hidden(os.fspath(t.lexical), active):
            raise ToolFailure(messages.folder_holds_hidden(t.virtual, command))
