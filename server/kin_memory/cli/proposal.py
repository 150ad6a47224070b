"""`kin-memory proposal list|show ID|apply ID [N…]|discard ID`: the proposals model passes left for review.

`show` numbers the changes (1, 2, …) and `apply ID 2 3` applies just those: changes are chosen by their
number, never by path (a rename and a create can share one).

The same proposals the editors review: made in one, applied from the other if need be.
"""

from __future__ import annotations

import argparse
import contextlib
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
            q.add_argument(
                "changes", nargs="*", metavar="N", help="only these changes, by the number `show` gives them"
            )
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
        return apply_now(
            root, proposal, args.json, _numbers(args.changes, len(proposal.changes)), target(args).active
        )
    except proposals.ProposalError as exc:
        raise UsageError(str(exc)) from None


def _numbers(given: list[str], count: int) -> list[int] | None:
    """`apply ID 2 3` → the changes' 0-based indices; a word that is not one of 1…count is a usage error."""
    if not given:
        return None
    out = []
    for word in given:
        if not word.isdigit() or not 1 <= int(word) <= count:
            raise UsageError(
                f"{terminal.field(word[:40])} is not a change of this proposal: give numbers from 1 to {count}, "
                "as `kin-memory proposal show` numbers them"
            )
        out.append(int(word) - 1)
    return out


def show_proposal(proposal: Proposal, as_json: bool) -> None:
    from ..proposals.results import proposal_result

    if as_json:
        print_json(proposal_result(proposal))
        return
    print(terminal.field(proposal.summary), file=sys.stderr)
    for number, change in enumerate(proposal.changes, 1):
        where = f"{change.path} -> {change.new_path}" if change.kind == "rename" else change.path
        sys.stdout.write(f"# change {number}: {change.kind} {terminal.field(where)}\n")
        sys.stdout.write(terminal.block(change.diff))
        if not change.diff.endswith("\n"):
            sys.stdout.write("\n")
    sys.stdout.flush()


def apply_now(
    root: Path,
    proposal: Proposal,
    as_json: bool,
    indices: list[int] | None = None,
    active: tuple[str, ...] = (),
) -> int:
    """Apply the chosen changes (all when None), visibility checked against `active`."""
    from ..proposals import store as proposals
    from ..proposals.apply import apply_proposal
    from ..proposals.results import apply_result

    result = apply_proposal(root, proposal, indices, active=active)
    if len(result.applied_changes) == len(proposal.changes):
        with contextlib.suppress(proposals.ProposalError):  # applied at once (--yes): it was never kept
            proposals.discard(root, proposal.id)
    if as_json:
        print_json(apply_result(result))
    else:
        for path, why in result.conflicts:
            print(terminal.field(f"not applied: {path}: {why}"), file=sys.stderr)
        print(f"applied {len(result.applied)} of {counted(len(proposal.changes), 'change')}", file=sys.stderr)
    return 1 if result.conflicts else 0
