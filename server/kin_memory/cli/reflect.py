"""`kin-memory reflect TRANSCRIPT`: one bounded pass, printed as a proposal (summary and diffs); nothing is
written unless `--yes` applies it at once."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..sinks import terminal
from .common import UsageError, target
from .proposal import apply_now, show_proposal


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
    p.add_argument("--dry-run", action="store_true", help="(the default) propose only; nothing is written")
    p.add_argument("--yes", action="store_true", help="apply the proposal at once")
    p.add_argument(
        "--json", action="store_true", help="print the proposal (or, with --yes, what was applied)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..proposals import store as proposals
    from ..reflect import config as cfg
    from ..reflect import transcript as transcripts
    from ..reflect.propose import proposal_of
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
        cfg.check(config, cfg.flag_label)
        key = cfg.api_key(config, label=cfg.flag_label)
        transcript = transcripts.read(Path(args.transcript).expanduser(), args.transcript)
    except (cfg.ConfigError, transcripts.TranscriptError) as exc:
        raise UsageError(str(exc)) from None
    tty = sys.stderr.isatty()
    try:
        outcome = reflect(root, transcript, config, key, workspace,
                          progress=(lambda m: print(f"… {terminal.field(m)}", file=sys.stderr)) if tty else None)  # fmt: skip
    except (Cancelled, KeyboardInterrupt):
        print("cancelled: nothing was proposed", file=sys.stderr)
        return 130
    proposal = proposal_of(root, outcome, workspace)
    failed = outcome.stopped == "error"
    if args.yes and proposal.changes and not failed:
        return apply_now(root, proposal, args.json, active=(workspace,) if workspace else ())
    if proposal.changes and not failed:
        proposals.save(root, proposal)
    show_proposal(proposal, args.json)
    if proposal.changes and not failed and not args.json:
        print(f"nothing written; apply with: kin-memory proposal apply {proposal.id}", file=sys.stderr)
    return 1 if failed else 0
