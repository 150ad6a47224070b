"""`kin-memory serve`: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import sys

from .common import UsageError, flag_sentence


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("serve", parents=[common], help="run the language server")
    p.add_argument(
        "--stdio", action="store_true", help="use stdio (the default; accepted for editor clients)"
    )
    p.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=2087)
    p.set_defaults(func=run)


SWITCH_INTERVAL = 0.0005  # seconds


def run(args: argparse.Namespace) -> int:
    if args.workspace is not None:  # refused up front, as every other subcommand does
        from ..store.workspace import WorkspaceValueError, workspace_value

        try:
            workspace_value(args.workspace)
        except WorkspaceValueError as exc:
            raise UsageError(flag_sentence("--workspace", str(exc))) from None
    # Forked before the LSP stack imports (see lsp/startup/shards.py): no threads exist yet.
    shards = _start_shards(args.root, args.workspace)
    from ..lsp.server import create_server
    from ..lsp.startup.strategy import ShardedStartup
    from ..lsp.transport import serve_stdio, serve_tcp

    server = create_server(root=args.root, workspace=args.workspace, startup=ShardedStartup(shards))
    # The event loop shares the interpreter with the reader, the index writer and the query pool: a
    # shorter switch interval lets it take its turn within a fraction of a millisecond instead of up to
    # 5 ms each time it waits on a write, which is what a hover or a publish felt during bursts.
    sys.setswitchinterval(SWITCH_INTERVAL)
    if args.tcp:
        serve_tcp(server, args.host, args.port)
    else:
        serve_stdio(server)
    return 0


def _start_shards(root_arg: str | None, workspace_arg: str | None):
    """Cold-start workers, unless KIN_MEMORY_WORKERS=0 (a number forces that many workers)."""
    import os
    import time

    from ..lsp.startup.shards import Shards
    from ..store.context import Context
    from ..store.root import resolve_root
    from ..store.workspace import active_workspaces

    setting = os.environ.get("KIN_MEMORY_WORKERS", "")
    workers = int(setting) if setting.isdigit() else None
    if workers == 0:
        return None
    try:
        root = resolve_root(root_arg).path
        # Editors start the server in the folder they open and send that folder: guess it, so the
        # speculative check usually matches (a wrong guess is abandoned as soon as the real one arrives).
        guess = Context(
            root=root, active=active_workspaces([os.getcwd()], root, workspace_arg), now=time.time()
        )
        return Shards.start(root, workers, guess)
    except OSError:
        return None
