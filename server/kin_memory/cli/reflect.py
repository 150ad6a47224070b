"""`kin-memory reflect TRANSCRIPT`: one bounded pass, printed as a proposal (summary and diffs); nothing is
written unless `--yes` applies it at once."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..bounds import MAX_TIMEOUT, MAX_TOOL_CALLS, real_arg, whole_arg
from ..sinks import terminal
from .common import UsageError, target
from .proposal import apply_now, show_proposal

FORMATS = """transcripts it reads (JSON lines, or plain text / markdown):
  Claude Code sessions   ~/.claude/projects/<folder>/<session>.jsonl, the folder being the working
                         directory with / and . as - (under $CLAUDE_CONFIG_DIR when set)
  Codex CLI rollouts     ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl (under $CODEX_HOME when set)
  chat messages          one Anthropic- or OpenAI-shaped {"role": ..., "content": ...} a line

--latest takes the newest session of the workspace from either place. A long session is read from its
end: the newest turns always reach the model, and what was left out or shortened (the oldest turns,
long tool results, images) is counted and printed."""


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "reflect",
        parents=[common],
        help="one bounded reflection pass over a transcript",
        description="One bounded reflection pass: a model reads a session transcript with the memory\n"
        "tool in hand and proposes memory changes; nothing is written unless --yes applies them.",
        epilog=FORMATS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "transcript",
        metavar="TRANSCRIPT",
        nargs="?",
        help="a Claude Code session, a Codex CLI rollout, JSON lines of chat messages, or text",
    )
    p.add_argument(
        "--latest",
        action="store_true",
        help="the newest Claude Code or Codex session of the workspace, instead of TRANSCRIPT",
    )
    p.add_argument("--provider", choices=("anthropic", "openai"))
    p.add_argument("--model")
    p.add_argument("--base-url")
    p.add_argument("--api-key-env", metavar="NAME", help="the environment variable holding the key")
    p.add_argument("--max-tool-calls", type=whole_arg(1, MAX_TOOL_CALLS), default=16)
    p.add_argument("--timeout", type=real_arg(0, MAX_TIMEOUT), default=90.0, metavar="SECONDS")
    p.add_argument("--dry-run", action="store_true", help="(the default) propose only; nothing is written")
    p.add_argument("--yes", action="store_true", help="apply the proposal at once")
    p.add_argument(
        "--json", action="store_true", help="print the proposal (or, with --yes, what was applied)"
    )
    p.set_defaults(func=run)


def _source(args: argparse.Namespace, workspace: str | None) -> tuple[Path, str]:
    """The transcript's path and how to name it: TRANSCRIPT, or the newest session with --latest."""
    from ..reflect import sessions

    if args.latest == (args.transcript is not None):
        raise UsageError("give either a TRANSCRIPT or --latest")
    if not args.latest:
        return Path(args.transcript).expanduser(), args.transcript
    if not workspace or not os.path.isabs(workspace):
        raise UsageError("--latest needs a workspace folder: run it inside the project or pass --workspace")
    found = sessions.latest_session(workspace)
    if found is None:
        places = ", ".join(terminal.field(str(p)) for p in sessions.where(workspace))
        raise UsageError(f"no Claude Code or Codex session of {terminal.field(workspace)} was found "
                         f"(looked in {places})")  # fmt: skip
    print(f"reading the latest {found.agent} session: {terminal.field(str(found.path))}", file=sys.stderr)
    return found.path, str(found.path)


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
        path, shown = _source(args, workspace)
        transcript = transcripts.read(path, shown)
    except (cfg.ConfigError, transcripts.TranscriptError) as exc:
        raise UsageError(str(exc)) from None
    if transcript.cuts.sentence():  # the model does not see everything: say so, before it answers
        print(transcript.cuts.sentence(), file=sys.stderr)
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
