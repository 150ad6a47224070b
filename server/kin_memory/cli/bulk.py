"""`kin-memory fix [--yes]` and `kin-memory restamp STAMP TO [--yes]`: bulk fixes as one proposal.

Without --yes the proposal's diffs are printed and kept for review (`kin-memory proposal apply ID`);
with --yes it is applied at once, exactly as computed, each file checked for changes first.
"""

from __future__ import annotations

import argparse
import os
import sys

from .common import UsageError, target


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "fix", parents=[common], help="the store's safe fixes (fences, categories) as one proposal"
    )
    p.add_argument("--yes", action="store_true", help="apply at once")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_fix)
    p = subparsers.add_parser(
        "restamp", parents=[common], help="a new stamp for every memory of a moved repository"
    )
    p.add_argument("stamp", metavar="STAMP", help="the old workspace stamp (the repository's former path)")
    p.add_argument("to", metavar="TO", help="the repository's path now, or global")
    p.add_argument("--yes", action="store_true", help="apply at once")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_restamp)


def _review(root, proposal, args: argparse.Namespace) -> int:
    from .proposal import apply_now, show_proposal

    if args.yes and proposal.changes:
        return apply_now(root, proposal, args.json)  # store-wide fixes, made here: the operator's view
    show_proposal(proposal, args.json)
    if proposal.changes and not args.json:
        print(f"nothing written; apply with: kin-memory proposal apply {proposal.id}", file=sys.stderr)
    return 0


def _existing(root) -> None:
    if not os.path.isdir(root):
        from ..sinks import terminal

        raise UsageError(f"no memory store at {terminal.field(root)}: nothing to fix")


def run_fix(args: argparse.Namespace) -> int:
    from ..proposals.bulk import fix_all
    from ..store.context import cli_context

    t = target(args)
    _existing(t.root)
    return _review(t.root, fix_all(t.root, cli_context(t.root, t.workspace)), args)


def run_restamp(args: argparse.Namespace) -> int:
    from ..proposals.bulk import restamp
    from ..store.workspace import GLOBAL

    to = args.to
    if to != GLOBAL:
        if not os.path.isdir(to):
            raise UsageError(f"{to} is not a folder: give the repository's path now, or global")
        to = os.path.realpath(to)
    root = target(args).root
    _existing(root)
    return _review(root, restamp(root, args.stamp, to), args)
