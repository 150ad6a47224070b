"""`kin-memory sweep [--dry-run] [--yes]`: list expired episodic/session memories, then delete them."""

from __future__ import annotations

import sys

from ..bounds import MAX_DAYS, real_arg
from ..sinks import terminal
from .common import UsageError, print_json, target

PROGRESS_MIN = 20  # files; below this a progress line is noise


def register(subparsers, common) -> None:
    p = subparsers.add_parser("sweep", parents=[common], help="delete expired episodic and session memories")
    p.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    p.add_argument(
        "--yes", "-y", action="store_true", help="delete without asking (needed when not on a terminal)"
    )
    p.add_argument("--json", action="store_true", help="print {swept, kept} as JSON")
    p.add_argument(
        "--episodic-days",
        type=real_arg(0, MAX_DAYS),
        default=42,
        metavar="N",
        help="episodic memories expire after N days (42)",
    )
    p.add_argument(
        "--session-hours",
        type=real_arg(0, MAX_DAYS * 24),
        default=24,
        metavar="N",
        help="session memories expire after N hours (24)",
    )
    p.set_defaults(func=handler)


def _ask(question: str) -> bool:
    sys.stderr.write(question)
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def handler(args) -> int:
    from ..protocol import SweepResult
    from ..store.lifecycle import Thresholds
    from ..tool.sweep import apply_sweep, plan_sweep

    if args.episodic_days <= 0 or args.session_hours <= 0:
        raise UsageError("--episodic-days and --session-hours must be positive")
    root = target(args).root
    t = Thresholds(episodic_days=args.episodic_days, session_hours=args.session_hours)
    plan = plan_sweep(root, t)
    human = not args.json
    if human:
        for e in plan.expired:
            # the list the user confirms before deleting: one memory per line, whatever its name holds
            print(f"{terminal.field(e.vpath)}\t{terminal.field(e.category)}\t{e.age_days:.1f} days old")
        print(
            f"{len(plan.expired)} expired {'memory' if len(plan.expired) == 1 else 'memories'}, {plan.kept} kept"
        )
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    go = bool(plan.expired) and not args.dry_run
    if go and not args.yes:
        if interactive:
            go = _ask(f"Delete {len(plan.expired)} expired memories? [y/N] ")
        else:
            go = False
            print("not a terminal: nothing deleted (pass --yes to delete)", file=sys.stderr)
    elif args.dry_run and human:
        print("dry run: nothing deleted")
    if not go:
        if args.json:
            would = (
                [] if plan.expired and not args.dry_run and not args.yes else [e.vpath for e in plan.expired]
            )
            print_json(SweepResult(swept=would, kept=plan.total - len(would)))
        return 0

    def progress(done: int, total: int) -> None:
        if interactive and total >= PROGRESS_MIN:
            sys.stderr.write(f"\rsweeping {done}/{total}")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    result = apply_sweep(root, plan, t, progress=progress)
    for vpath, message in result.failed:
        print(f"{terminal.field(vpath)}: {terminal.field(message)}", file=sys.stderr)
    for vpath in result.changed:  # listed above, but written since: not the file the user agreed to delete
        print(f"kept {terminal.field(vpath)}: it changed since it was listed", file=sys.stderr)
    if args.json:
        print_json(SweepResult(swept=list(result.swept), kept=result.kept, changed=list(result.changed)))
    else:
        print(f"swept {len(result.swept)}, kept {result.kept}")
    return 1 if result.failed else 0
