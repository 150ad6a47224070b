"""The model provider flags of the passes besides `reflect` (`init`, `consolidate`): the same flags,
checked the same way, named as flags in every message."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..bounds import MAX_TIMEOUT, MAX_TOOL_CALLS, real_arg, whole_arg
from .common import UsageError

if TYPE_CHECKING:  # imported when a pass runs, not to build the parser
    from ..proposals.model import Proposal
    from ..reflect.config import ReflectConfig


def add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--provider", choices=("anthropic", "openai"))
    p.add_argument("--model")
    p.add_argument("--base-url")
    p.add_argument("--api-key-env", metavar="NAME", help="the environment variable holding the key")
    p.add_argument("--max-tool-calls", type=whole_arg(1, MAX_TOOL_CALLS), default=16)
    p.add_argument("--timeout", type=real_arg(0, MAX_TIMEOUT), default=90.0, metavar="SECONDS")
    p.add_argument("--yes", action="store_true", help="apply the proposal at once")
    p.add_argument(
        "--json", action="store_true", help="print the proposal (or, with --yes, what was applied)"
    )


def config_and_key(args: argparse.Namespace) -> tuple[ReflectConfig, str]:
    from ..reflect import config as cfg

    if args.max_tool_calls < 1 or args.timeout <= 0:
        raise UsageError("--max-tool-calls and --timeout must be positive")
    config = cfg.ReflectConfig(provider=args.provider, model=args.model, base_url=args.base_url,
                               api_key_env=args.api_key_env, max_tool_calls=args.max_tool_calls,
                               timeout=args.timeout)  # fmt: skip
    try:
        cfg.check(config, cfg.flag_label)
        return config, cfg.api_key(config, label=cfg.flag_label)
    except cfg.ConfigError as exc:  # reflection's sentence; these passes are not reflection
        raise UsageError(str(exc).replace("reflection is not configured", "no model is configured")) from None


def progress_printer() -> Callable[[str], None] | None:
    import sys

    from ..sinks import terminal

    if not sys.stderr.isatty():
        return None
    return lambda m: print(f"… {terminal.field(m)}", file=sys.stderr)


def finish(root: Path, proposal: Proposal, failed: bool, args: argparse.Namespace) -> int:
    """Apply at once (--yes), or keep the proposal and print it, like `reflect`."""
    import sys

    from ..proposals import store as proposals
    from .proposal import apply_now, show_proposal

    if args.yes and proposal.changes and not failed:
        return apply_now(
            root, proposal, args.json, active=(proposal.workspace,) if proposal.workspace else ()
        )
    if proposal.changes and not failed:
        proposals.save(root, proposal)
    show_proposal(proposal, args.json)
    if proposal.changes and not failed and not args.json:
        print(f"nothing written; apply with: kin-memory proposal apply {proposal.id}", file=sys.stderr)
    return 1 if failed else 0
