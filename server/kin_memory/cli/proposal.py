"""`kin-memory proposal list|show ID|apply ID [PATH…]|discard ID`: the proposals model passes left for review.

The same proposals the editors review: made in one, applied from the other if need be.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..sinks import terminal
from ..wording import counted
from .common import UsageError, print_json, target

if TYPE_CHECKING:  # imported when a proposal command runs, not to build the parser
    from ..proposals.model import Proposal


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("proposal", parents=[common], help="review, apply or discard proposals")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text in (("list", "the proposals not yet applied"), ("show", "one proposal's diffs"),
                            ("apply", "write a proposal exactly as shown"), ("discard", "forget a proposal")):  # fmt: skip
        q = sub.add_parser(name, parents=[common], help=help_text)
        if name != "list":
            q.add_argument("id", metavar="ID")
        if name == "apply":
            q.add_argument("paths", nargs="*", metavar="PATH", help="only these changes (virtual paths)")
        q.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..proposals import store as proposals
    from ..proposals.results import proposal_info
    from ..protocol import ListProposalsResult, OkResult

    root = target(args).root
    try:
        if args.action == "list":
            found = proposals.list_all(root)
            if args.json:
                print_json(ListProposalsResult(proposals=[proposal_info(p) for p in found]))
            for p in [] if args.json else found:
                age = (time.time() - p.created) / 3600
                print(
                    f"{p.id}  {p.source}  {counted(len(p.changes), 'change')}  {age:.1f} h old  {terminal.field(p.summary)}"
                )
            return 0
        proposal = proposals.load(root, args.id)
        if args.action == "show":
            show_proposal(proposal, args.json)
            return 0
        if args.action == "discard":
            proposals.discard(root, proposal.id)
            print_json(OkResult()) if args.json else print(f"discarded {proposal.id}")
            return 0
        return apply_now(root, proposal, args.json, args.paths or None)
    except proposals.ProposalError as exc:
        raise UsageError(str(exc)) from None


def show_proposal(proposal: Proposal, as_json: bool) -> None:
    from ..proposals.results import proposal_result

    if as_json:
        print_json(proposal_result(proposal))
        return
    print(terminal.field(proposal.summary), file=sys.stderr)
    for change in proposal.changes:
        sys.stdout.write(terminal.block(change.diff))
        if not change.diff.endswith("\n"):
            sys.stdout.write("\n")
    sys.stdout.flush()


def apply_now(root: Path, proposal: Proposal, as_json: bool, paths: list[str] | None = None) -> int:
    from ..proposals import store as proposals
    from ..proposals.apply import apply_proposal
    from ..proposals.results import apply_result

    result = apply_proposal(root, proposal, paths)
    done = set(result.applied)
    if all((c.new_path or c.path) in done for c in proposal.changes):
        proposals.discard(root, proposal.id)
    if as_json:
        print_json(apply_result(result))
    else:
        for path, why in result.conflicts:
            print(terminal.field(f"not applied: {path}: {why}"), file=sys.stderr)
        print(f"applied {len(result.applied)} of {counted(len(proposal.changes), 'change')}", file=sys.stderr)
    return 1 if result.conflicts else 0
