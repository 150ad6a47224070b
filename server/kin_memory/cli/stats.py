"""`kin-memory stats`: the store's health at a glance, the same result as the `kin.memory.stats` command."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..sinks import terminal
from .common import file_uri, print_json, target

if TYPE_CHECKING:  # imported when the command runs, not to build the parser
    from ..protocol import StatsResult


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "stats",
        parents=[common],
        help="the store's health: counts by category and status, what expires soon, quiet memories, "
        "duplicates and contradictions, the prompt block's size, the review queue",
    )
    p.add_argument("--json", action="store_true", help="print the same JSON as the kin.memory.stats command")
    p.set_defaults(func=run)


def _review_queue(root) -> int:
    from ..history.db import HistoryUnavailable
    from ..history.query import HistoryError
    from ..history.review import queue_size
    from ..history.sync import catch_up

    try:
        catch_up(root)  # what the agent wrote while no editor ran is queued first, as the editor would
        return queue_size(root)
    except (HistoryUnavailable, HistoryError):
        return 0


def run(args: argparse.Namespace) -> int:
    from .. import protocol
    from ..recall.peek import peek_count
    from ..stats import store_stats
    from ..store.context import cli_context
    from ..store.paths import real_path
    from ..store.store import load_store

    where = target(args)
    count = peek_count(where.root)
    state = protocol.IndexState(state="unavailable" if count is None else "ready", memories=count or 0)
    result = store_stats(
        load_store(where.root), cli_context(where.root, where.workspace), root=where.root_choice,
        memory_enabled=where.settings().memory_enabled, index=state, review_queue=_review_queue(where.root),
        uri_of=lambda vpath: file_uri(real_path(where.root, vpath)),
    )  # fmt: skip
    if args.json:
        print_json(result)
    else:
        for line in render(result):
            print(line)
    return 0


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KB"


def _plural(n: int, one: str, many: str = "") -> str:
    return f"{n} {one}" if n == 1 else f"{n} {many or one + 's'}"


def render(s: StatsResult) -> list[str]:
    """The result as lines for a terminal: every value from the store goes through the terminal sink."""
    f = terminal.field
    out = [
        f"store: {f(s.root)} (from {s.root_source})",
        f"memory: {'enabled' if s.memory_enabled else 'disabled'}",
        f"workspaces: {', '.join(f(w) for w in s.workspaces) or 'none (operator view)'}",
        "",
        f"{'category':<14}{'total':>7}{'ok':>7}{'stale':>7}{'expiring':>10}{'expired':>9}{'quiet':>7}",
    ]
    for category, c in s.by_category.items():
        out.append(
            f"{category:<14}{c.total:>7}{c.ok:>7}{c.stale:>7}{c.expiring:>10}{c.expired:>9}{c.quiet:>7}"
        )
    out.append("")
    out.append(f"expiring within 7 days: {len(s.expiring_soon) or 'none'}")
    for e in s.expiring_soon:
        when = "today" if e.days == 0 else f"in {_plural(e.days, 'day')}"
        out.append(f"  {e.expires} ({when})  {f(e.path)}  [{e.category}]")
    quiet = sum(len(r.paths) for r in s.quiet_by_repository)
    out.append(f"quiet (their repository no longer exists): {quiet or 'none'}")
    for r in s.quiet_by_repository:
        out.append(f"  {f(r.workspace)}: {_plural(len(r.paths), 'memory', 'memories')}")
        out += [f"    {f(p)}" for p in r.paths]
    out.append(f"duplicates and contradictions: {len(s.groups) or 'none'}")
    for g in s.groups:
        out.append(f"  {g.kind}: {f(g.reason)}")
        out += [f"    {f(p)}" for p in g.paths]
    b = s.prompt_block
    cut = " (cut: the rest is not inlined)" if b.truncated else ""
    out.append(
        f"prompt block: {b.lines} of {b.max_lines} lines, {_size(b.bytes)} of {_size(b.max_bytes)}{cut}"
    )
    out.append(f"review queue: {_plural(s.review_queue, 'change')} not yet reviewed")
    out.append(
        f"recall index: {s.index_state.state}, {_plural(s.index_state.memories, 'memory', 'memories')}"
    )
    return out
