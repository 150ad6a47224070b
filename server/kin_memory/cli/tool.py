"""`kin-memory tool JSON`: run one memory-tool call against the store and print its result."""

from __future__ import annotations

import json
import sys

from ..sinks import terminal
from .common import UsageError, target


def register(subparsers, common) -> None:
    p = subparsers.add_parser(
        "tool",
        parents=[common],
        help="run one memory tool call (JSON object, or - for stdin)",
        description="Run one memory-tool call and print its result: into a pipe or a file the tool's exact "
        "string (then a line feed), on a terminal with control characters made visible.",
    )
    p.add_argument(
        "json",
        metavar="JSON",
        help='the tool input, e.g. \'{"command": "view", "path": "/memories"}\'; - reads stdin',
    )
    p.set_defaults(func=handler)


def handler(args) -> int:
    from ..store.home import home_relative
    from ..tool.commands import ToolContext, run_tool

    raw = sys.stdin.read() if args.json == "-" else args.json
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, ValueError) as exc:
        raise UsageError(f"tool input is not valid JSON: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    if not isinstance(data, dict):
        raise UsageError("tool input must be a JSON object")
    where = target(args)
    settings = where.settings()
    ctx = ToolContext(
        root=where.root,
        workspace=where.workspace,
        enabled=settings.memory_enabled,
        disabled_by=home_relative(settings.disabled_by),
    )
    result = run_tool(data, ctx)
    _print_result(result.content)
    return 1 if result.is_error else 0


def _print_result(content: str) -> None:
    """On a terminal the result is made inert (a file's text, names and the model's own input could drive
    it); into a pipe or a file it is the tool's exact string, as the agent gets it, then a line feed."""
    if sys.stdout.isatty():
        print(terminal.block(content))
        return
    sys.stdout.flush()
    try:
        data = content.encode("utf-8", "surrogateescape")  # a name that is not UTF-8 as its own bytes
    except UnicodeEncodeError:
        data = content.encode("utf-8", "backslashreplace")
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.flush()
