"""`kin-memory reflect TRANSCRIPT`: one bounded pass, shown as a unified diff, applied only when confirmed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..sinks import terminal
from .common import UsageError, target


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "reflect", parents=[common], help="one bounded reflection pass over a transcript"
    )
    p.add_argument(
        "transcript", metavar="TRANSCRIPT", help="JSON lines of Anthropic/OpenAI messages, or text"
    )
    p.add_argument("--provider", choices=("anthropic", "openai"))
    p.add_argument("--model")
    p.add_argument("--base-url")
    p.add_argument("--api-key-env", metavar="NAME", help="the environment variable holding the key")
    p.add_argument("--max-tool-calls", type=int, default=16)
    p.add_argument("--timeout", type=float, default=90.0, metavar="SECONDS")
    p.add_argument("--dry-run", action="store_true", help="show the changes, never apply them")
    p.add_argument("--yes", action="store_true", help="apply without asking")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..reflect import config as cfg
    from ..reflect import transcript as transcripts
    from ..reflect.changes import apply_changes, unified_diff
    from ..reflect.run import Cancelled, reflect
    from ..tool import messages

    where = target(args)
    root, workspace = where.root, where.workspace
    settings = where.settings()
    if not settings.memory_enabled:
        raise UsageError(messages.disabled(settings.disabled_by))
    if args.max_tool_calls < 1 or args.timeout <= 0:
        raise UsageError("--max-tool-calls and --timeout must be positive")
    config = cfg.ReflectConfig(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        max_tool_calls=args.max_tool_calls,
        timeout=args.timeout,
    )
    try:
        cfg.check(config, cli=True)
        key = cfg.api_key(config, cli=True)
        transcript = transcripts.read(Path(args.transcript).expanduser(), args.transcript)
    except (cfg.ConfigError, transcripts.TranscriptError) as exc:
        raise UsageError(str(exc)) from None
    tty = sys.stderr.isatty()
    try:
        outcome = reflect(
            root,
            transcript,
            config,
            key,
            workspace,
            progress=(lambda m: print(f"… {terminal.field(m)}", file=sys.stderr)) if tty else None,
        )
    except (Cancelled, KeyboardInterrupt):
        print("cancelled: nothing applied", file=sys.stderr)
        return 130
    # the summary and the diff carry model output and memory text
    print(terminal.block(outcome.summary), file=sys.stderr)
    if outcome.changes:
        sys.stdout.write(terminal.block(unified_diff(outcome.changes)))
        sys.stdout.flush()
    if not outcome.reviewable:
        return 1 if outcome.stopped == "error" else 0
    if args.dry_run:
        print("dry run: nothing applied", file=sys.stderr)
        return 0
    if not args.yes:
        if not (tty and sys.stdin.isatty()):
            print("not applied: pass --yes to apply without a terminal to confirm on", file=sys.stderr)
            return 0
        answer = input("Apply these changes to the store? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("not applied", file=sys.stderr)
            return 0
    result = apply_changes(root, outcome.changes)
    for change, why in result.failed:
        print(f"not applied: {terminal.field(change.describe())}: {terminal.field(why)}", file=sys.stderr)
    print(f"applied {len(result.done)} of {len(outcome.changes)} changes", file=sys.stderr)
    return 1 if result.failed else 0
