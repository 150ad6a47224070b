"""One tool call: check it is enabled, well formed and allowed in this mode, run the command, audit it.
Never raises: every failure becomes an is_error result naming virtual paths only."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ...store.write_hook import around_write
from .. import audit, messages
from . import reach
from .base import MODES, MUTATIONS, Editor, ToolContext, ToolFailure, ToolResult, check_cancelled
from .create import create
from .delete import delete
from .insert import insert
from .params import ToolInput
from .rename import rename
from .str_replace import str_replace
from .view import view

HANDLERS: dict[str, Callable[[ToolInput, ToolContext], str]] = {
    "view": view,
    "create": create,
    "str_replace": str_replace,
    "insert": insert,
    "delete": delete,
    "rename": rename,
}


def _audit_paths(inp: ToolInput) -> list[str]:
    return [v for k in ("path", "old_path", "new_path") if isinstance(v := inp.get(k), str)]


def _handle(command: str, inp: ToolInput, ctx: ToolContext) -> ToolResult:
    try:
        if command in MUTATIONS and ctx.mode == "plan":
            raise ToolFailure(messages.plan_mode(command))
        reach.check(command, inp, ctx)
        if command in MUTATIONS:
            path = next(iter(_audit_paths(inp)), "")
            check_cancelled(ctx, command, path)
        return ToolResult(HANDLERS[command](inp, ctx), False)
    except ToolFailure as exc:
        return ToolResult(exc.message, True)
    except Exception:  # a bug or an unexpected OS state: the message must not leak host paths
        return ToolResult(f"The {command} command failed on the memory store", True)


def run_tool(input: object, ctx: ToolContext) -> ToolResult:  # noqa: A002 - the tool's own name
    """Run one tool call. Never raises: every failure is an is_error result naming virtual paths only."""
    if not ctx.enabled:
        return ToolResult(messages.disabled(ctx.disabled_by), True)
    if not isinstance(input, dict):
        return ToolResult(messages.bad_param("memory", "input", "an object"), True)
    command = input.get("command")
    if not isinstance(command, str) or command not in HANDLERS:
        return ToolResult(messages.unknown_command(command), True)
    if command in MUTATIONS and ctx.mode != "plan":
        with around_write(ctx.root, _audit_paths(input), ctx.source):  # the previous version first (history)
            result = _handle(command, input, ctx)
    else:
        result = _handle(command, input, ctx)
    if command in MUTATIONS:
        audit.record(ctx.root, command, _audit_paths(input), "error" if result.is_error else "ok", ctx.source)
    return result


def _first_workspace(workspaces: str | Sequence[str] | None) -> str | None:
    if isinstance(workspaces, str) or workspaces is None:
        return workspaces or None
    return next((w for w in workspaces if w), None)


def run(
    root: Path | str,
    workspaces: str | Sequence[str] | None,
    input: object,  # noqa: A002 - the tool's own name
    *,
    mode: str = "auto",
    confirm: Callable[[str], bool] | None = None,
    enabled: bool = True,
    disabled_by: str | None = None,
    editor: Editor | None = None,
) -> dict[str, str | bool]:
    """One tool call → ``{"content", "isError"}`` (see the package docstring)."""
    ctx = ToolContext(
        root=Path(root),
        workspace=_first_workspace(workspaces),
        visible_from=None
        if isinstance(workspaces, str) or workspaces is None
        else tuple(w for w in workspaces if w),
        mode=mode if mode in MODES else "auto",
        enabled=enabled,
        disabled_by=disabled_by,
        confirm=confirm,
        editor=editor,
    )
    result = run_tool(input, ctx)
    return {"content": result.content, "isError": result.is_error}
