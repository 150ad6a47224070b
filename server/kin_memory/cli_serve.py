"""`kin-memory serve`: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("serve", parents=[common], help="run the language server")
    p.add_argument("--stdio", action="store_true", help="use stdio (the default; accepted for editor clients)")
    p.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=2087)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .lsp.server import create_server

    server = create_server(root=args.root, workspace=args.workspace)
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return 0
