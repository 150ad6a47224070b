"""`kin-memory tool JSON`: run one memory-tool call against the store and print its result."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def settings_label(path: Path | str | None) -> str | None:
    """The settings file as shown to the model: `~/...` under the home folder (no user name leaked)."""
    if path is None:
        return None
    text = os.fspath(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and text.startswith(home.rstrip("/") + "/"):
        return "~" + text[len(home.rstrip("/")) :]
    return text


def register(subparsers, common) -> None:
    p = subparsers.add_parser(
        "tool", parents=[common], help="run one memory tool call (JSON object, or - for stdin)"
    )
    p.add_argument(
        "json",
        metavar="JSON",
        help='the tool input, e.g. \'{"command": "view", "path": "/memories"}\'; - reads stdin',
    )
    p.set_defaults(func=handler)


def handler(args) -> int:
    from kin_memory.cli import UsageError
    from kin_memory.store.root import resolve_root
    from kin_memory.store.settings import effective_settings
    from kin_memory.store.workspace import cli_workspace

    from .commands import ToolContext, run_tool

    raw = sys.stdin.read() if args.json == "-" else args.json
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, ValueError) as exc:
        raise UsageError(f"tool input is not valid JSON: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    if not isinstance(data, dict):
        raise UsageError("tool input must be a JSON object")
    root = resolve_root(getattr(args, "root", None)).path
    workspace = cli_workspace(getattr(args, "workspace", None), root)
    settings = effective_settings([workspace] if workspace and workspace != "global" else [])
    ctx = ToolContext(
        root=root,
        workspace=workspace,
        enabled=settings.memory_enabled,
        disabled_by=settings_label(settings.disabled_by),
    )
    result = run_tool(data, ctx)
    print(result.content)
    return 1 if result.is_error else 0
