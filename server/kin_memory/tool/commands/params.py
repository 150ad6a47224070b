"""Checked parameters of a tool call. A model may send anything: a missing or mistyped parameter is a
failure naming it, never an exception from deeper down."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .. import messages
from ..guard import GuardError, Target, resolve
from .base import ToolFailure

ToolInput = Mapping[str, object]


def str_param(
    inp: ToolInput, command: str, name: str, *, required: bool = True, default: str | None = None
) -> str:
    if name not in inp or inp[name] is None:
        if required:
            raise ToolFailure(messages.missing_param(command, name))
        return default if default is not None else ""
    value = inp[name]
    if not isinstance(value, str):
        raise ToolFailure(messages.bad_param(command, name, "a string"))
    return value


def int_param(inp: ToolInput, command: str, name: str) -> int:
    if name not in inp or inp[name] is None:
        raise ToolFailure(messages.missing_param(command, name))
    value = inp[name]
    if isinstance(value, bool) or not isinstance(value, int):  # True is an int to Python, not to the tool
        raise ToolFailure(messages.bad_param(command, name, "an integer"))
    return value


def view_range_param(inp: ToolInput) -> tuple[int, int] | None:
    """`view_range`: absent, or exactly two integers (start, end; end -1 means to the last line)."""
    value = inp.get("view_range")
    if value is None:
        return None
    if not (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ToolFailure(messages.bad_param("view", "view_range", "[start, end] integers"))
    return value[0], value[1]


def guarded(root: Path, vpath: str) -> Target:
    """The guard's safe target for an untrusted virtual path, or its refusal as a failure."""
    try:
        return resolve(root, vpath)
    except GuardError as exc:
        raise ToolFailure(exc.message) from None
