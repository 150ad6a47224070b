"""`kin-memory init [DIR]`: one bounded model pass proposing a repository's first memories from its
documents (AGENTS.md, CLAUDE.md, STATUS.md, README*, CONTRIBUTING*, docs/**/*.md), printed as a proposal;
nothing is written unless `--yes` applies it at once."""

from __future__ import annotations

import argparse
import os
import sys

from .common import UsageError, target
from .provider import add_flags, config_and_key, finish, progress_printer


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "init", parents=[common], help="propose a repository's first memories from its documents"
    )
    p.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="the repository (default: the git top level of the current directory)",
    )
    add_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..initialize.run import InitError, init_proposal, initialize
    from ..reflect.run import Cancelled
    from ..store.workspace import _git_toplevel
    from ..tool import messages

    where = target(args)
    root = where.root
    if not where.settings().memory_enabled:
        raise UsageError(messages.disabled(where.settings().disabled_by))
    config, key = config_and_key(args)
    folder = args.dir or _git_toplevel(os.getcwd()) or os.getcwd()
    try:
        outcome, sources, stamp = initialize(root, folder, config, key, progress=progress_printer())
    except InitError as exc:
        raise UsageError(f"cannot initialize from {folder}: {exc}") from None
    except (Cancelled, KeyboardInterrupt):
        print("cancelled: nothing was proposed", file=sys.stderr)
        return 130
    proposal = init_proposal(root, outcome, sources, stamp)
    return finish(root, proposal, outcome.stopped == "error", args)
