"""`kin-memory consolidate`: the consolidation candidates (duplicates, contradictions, stale facts,
episodes to keep) computed without a model; with `--provider`, one bounded model pass over them, printed
as a proposal (nothing is written unless `--yes` applies it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import UsageError, print_json, target
from .provider import add_flags, config_and_key, finish, progress_printer

if TYPE_CHECKING:  # imported when the command runs, not to build the parser
    from ..consolidate.candidates import Candidate


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "consolidate",
        parents=[common],
        help="consolidation candidates; with --provider, a model pass over them",
    )
    add_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from ..consolidate.candidates import survey
    from ..consolidate.run import consolidate, consolidation_proposal
    from ..reflect.run import Cancelled
    from ..store.store import load_store
    from ..tool import messages

    where = target(args)
    root, workspace = where.root, where.workspace
    if not where.settings().memory_enabled:
        raise UsageError(messages.disabled(where.settings().disabled_by))
    model = args.provider is not None
    config, key = config_and_key(args) if model else (None, "")
    store = load_store(root)
    found = survey(store, where.active, time.time())
    if config is None:
        _print_candidates(found, args.json, root)
        return 0
    memories = {p: m for c in found for p in c.paths if (m := store.get(p)) is not None}
    try:
        done = consolidate(root, workspace, found, memories, config, key, progress=progress_printer())
    except (Cancelled, KeyboardInterrupt):
        print("cancelled: nothing was proposed", file=sys.stderr)
        return 130
    proposal = consolidation_proposal(root, workspace, done)
    return finish(root, proposal, done.outcome.stopped == "error", args)


def _print_candidates(found: list[Candidate], as_json: bool, root: Path) -> None:
    from .. import protocol
    from ..sinks import terminal
    from ..store.paths import real_path
    from .common import file_uri

    if as_json:
        print_json(protocol.CandidatesResult(candidates=[
            protocol.ConsolidationCandidate(kind=c.kind, paths=list(c.paths), reason=c.reason,
                                            uris=[file_uri(real_path(root, p)) for p in c.paths])
            for c in found]))  # fmt: skip
        return
    for c in found:
        print(f"{c.kind}: {terminal.field(c.reason)}")
        for p in c.paths:
            print(f"  {terminal.field(p)}")
    print(f"{len(found)} candidate group{'s' if len(found) != 1 else ''}", file=sys.stderr)
