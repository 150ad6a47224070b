"""`kin-memory serve`: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import sys

from ..bounds import whole_arg
from .common import UsageError, flag_sentence


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("serve", parents=[common], help="run the language server")
    p.add_argument(
        "--stdio", action="store_true", help="use stdio (the default; accepted for editor clients)"
    )
    p.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=whole_arg(0, 65535), default=2087)
    p.set_defaults(func=run)


SWITCH_INTERVAL = 0.0005  # seconds
FRONT_CHECK_WAIT = 60.0  # seconds the start-up front's check may delay the import of the LSP stack


def run(args: argparse.Namespace) -> int:

    if args.workspace is not None:  # refused up front, as every other subcommand does
        from ..store.workspace import WorkspaceValueError, workspace_value

        try:
            workspace_value(args.workspace)
        except WorkspaceValueError as exc:
            raise UsageError(flag_sentence("--workspace", str(exc))) from None
    # Forked before the LSP stack imports (see lsp/startup/shards.py): no threads exist yet.
    shards = _start_shards(args.root, args.workspace)
    # The event loop shares the interpreter with the reader, the index writer and the query pool (and at
    # start, the thread taking the workers' results shares it with the import of the LSP stack): a
    # shorter switch interval lets a waiting thread take its turn within a fraction of a millisecond
    # instead of up to 5 ms each time, which is what a hover or a publish felt during bursts.
    sys.setswitchinterval(SWITCH_INTERVAL)
    session, front = (None, None) if args.tcp else _run_front(args.root, args.workspace, shards)
    if front is not None:
        # The check gets the processors to itself (importing the LSP stack meanwhile slows it down by
        # half) until it is done or a message other than a search came (see Handover.wait_before_import).
        front.wait_before_import(FRONT_CHECK_WAIT)
    from ..lsp.server import create_server
    from ..lsp.startup.strategy import PreparedStartup, ShardedStartup, Startup
    from ..lsp.transport import serve_handover, serve_stdio, serve_tcp

    startup: Startup = ShardedStartup(shards)
    if front is not None:
        startup = (
            PreparedStartup(front.check, front.recall_synced) if front.check else ShardedStartup(front.shards)
        )
    server = create_server(args.root, args.workspace, startup, session=session, front=front)
    if args.tcp:
        serve_tcp(server, args.host, args.port)
    elif front is not None:
        serve_handover(server, front)
    else:
        serve_stdio(server)
    return 0


def _run_front(root: str | None, workspace: str | None, shards):
    """The start-up front (lsp/startup/front.py) over stdin/stdout: (the session it made, its handover),
    or (None, None) when KIN_MEMORY_FRONT=0 or stdio is not a pair of descriptors."""
    import os

    if os.environ.get("KIN_MEMORY_FRONT", "") == "0":
        return None, None
    from ..lsp.startup.front import Front
    from ..lsp.wire import FdReader, Outlet

    try:
        sys.stdout.flush()
        reader, outlet = FdReader(sys.stdin.fileno()), Outlet(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        return None, None

    def make_session():
        from ..lsp.session import Session

        return Session(root, workspace)

    return Front(make_session, shards, reader, outlet).run()


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
