"""`kin-memory serve`: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import os
import sys

from ..bounds import whole_arg
from .common import UsageError, flag_sentence


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("serve", parents=[common], help="run the language server")
    p.add_argument(
        "--stdio", action="store_true", help="use stdio (the default; accepted for editor clients)"
    )
    p.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="with --tcp: the address to listen on (loopback)")
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --tcp: allow a --host other than loopback (anyone who reaches the port and holds the "
        "token can read and change the store)",
    )
    p.add_argument("--port", type=whole_arg(0, 65535), default=2087)
    p.set_defaults(func=run)


SWITCH_INTERVAL = 0.0005  # seconds
LOG_NAME = "server.log"  # in the cache folder ($XDG_CACHE_HOME/kin-memory, else ~/.cache/kin-memory)
LOG_BYTES = 512 * 1024  # one file this large, then it is rotated once (server.log.1)


def log_file() -> str:
    from ..caches.handshake import cache_dir

    return os.path.join(cache_dir(), LOG_NAME)


def log_to_file() -> None:
    """The server's own log, which an editor can point at when the server stops (no editor keeps the
    server's stderr where a person finds it): warnings and errors, and a line at each start. Stderr
    still gets the warnings, as before. A log that cannot be opened is simply not kept."""
    import logging
    import logging.handlers

    path = log_file()
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_BYTES, backupCount=1, encoding="utf-8", delay=False
        )
    except OSError:
        return
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    root.addHandler(stderr)
    root.setLevel(logging.WARNING)
    start = logging.getLogger("kin_memory.serve")
    start.setLevel(logging.INFO)
    start.info("the language server started (process %d)", os.getpid())


FRONT_CHECK_WAIT = 60.0  # seconds the start-up front's check may delay the import of the LSP stack


def run(args: argparse.Namespace) -> int:
    if args.workspace is not None:  # refused up front, as every other subcommand does
        from ..store.workspace import WorkspaceValueError, workspace_value

        try:
            workspace_value(args.workspace)
        except WorkspaceValueError as exc:
            raise UsageError(flag_sentence("--workspace", str(exc))) from None
    if args.tcp:
        _check_host(args.host, args.allow_remote)
    log_to_file()
    # Forked before the LSP stack imports (see lsp/startup/shards/): no threads exist yet.
    shards = _start_shards(args.root, args.workspace)
    # Opened after the fork: a worker must not hold the listening socket open once the client is admitted.
    opened = _open_door(args.host, args.port, shards) if args.tcp else None
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
    from ..lsp.transport import serve_handover, serve_stdio, serve_tcp

    server = create_server(args.root, args.workspace, shards, session=session, front=front)
    if opened is not None:
        serve_tcp(server, opened)
    elif front is not None:
        serve_handover(server, front)
    else:
        serve_stdio(server)
    return 0


def _check_host(host: str, allow_remote: bool) -> None:
    """Loopback only, unless the user said otherwise (then with a warning they cannot miss)."""
    from ..lsp.door import is_loopback

    if not is_loopback(host):
        _refuse_or_warn(host, allow_remote)


def _open_door(host: str, port: int, shards):
    """The TCP door (lsp/door.py): the port and the token file, before the LSP stack is built."""
    from ..lsp.door import Unavailable, open_door

    try:
        return open_door(host, port)
    except Unavailable as exc:
        if shards is not None:
            shards.close()
        raise UsageError(str(exc)) from None


def _refuse_or_warn(host: str, allow_remote: bool) -> None:
    if not allow_remote:
        raise UsageError(flag_sentence("--host", (
            f"{host} is not a loopback address: other machines could reach the server; listen on 127.0.0.1, "
            "or pass --allow-remote to accept that"
        )))  # fmt: skip
    print(f"kin-memory: warning: listening on {host}, which other machines may reach: anyone who reaches "
          "the port and holds the token can read and change the store.", file=sys.stderr, flush=True)  # fmt: skip


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

    from ..caches.sharded import workers_setting
    from ..lsp.startup.shards import Shards
    from ..store.context import Context
    from ..store.root import resolve_root
    from ..store.workspace import active_workspaces

    workers = workers_setting()
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
