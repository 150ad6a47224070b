"""The `kin-memory` command line: one parser, subcommands registered by the modules that own them."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from .. import __version__
from ..sinks import terminal
from .common import UsageError

# Each module exposes `register(subparsers, common)`; `common` is the parent parser carrying
# --root/--workspace. Handlers are `func(args) -> int` set with `set_defaults(func=...)`.
SUBCOMMAND_MODULES = (
    "kin_memory.cli.check",
    "kin_memory.cli.serve",
    "kin_memory.cli.info",
    "kin_memory.cli.search",
    "kin_memory.cli.tool",
    "kin_memory.cli.sweep",
    "kin_memory.cli.reflect",
    "kin_memory.cli.init",
    "kin_memory.cli.consolidate",
    "kin_memory.cli.proposal",
    "kin_memory.cli.history",
    "kin_memory.cli.bulk",
    "kin_memory.cli.stats",
    "kin_memory.cli.sync",
    "kin_memory.cli.mcp",
)


def common_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--root",
        metavar="DIR",
        help="memory store root (default: KIN_MEMORY_DIR, memory_dir in ~/.kin/settings.toml, ~/.kin/memory)",
    )
    common.add_argument(
        "--workspace",
        metavar="W",
        help="active workspace (default: git top level or "
        "realpath of the current directory when outside the store; 'none' for the operator view)",
    )
    return common


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (`only`, a module's name) just that module's subcommands: a run of
    `kin-memory check` then imports and builds nothing else."""
    parser = argparse.ArgumentParser(
        prog="kin-memory", description="Check, search and curate an agent's memory store."
    )
    parser.add_argument("--version", action="version", version=f"kin-memory {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = common_parser()
    for name in SUBCOMMAND_MODULES if only is None else (only,):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # a subcommand family not built into this install
            raise
        module.register(subparsers, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    asked = args_in[0] if args_in else None
    parser = build_parser(next((m for m in SUBCOMMAND_MODULES if m.rpartition(".")[2] == asked), None))
    args = parser.parse_args(args_in)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"kin-memory: {terminal.field(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


# Commands that leave nothing to finish once they returned: their process ends without the interpreter's
# teardown (see entry).
QUICK_EXIT = frozenset({"check"})


def entry() -> NoReturn:
    """The `kin-memory` program: main(), then the process ends. After a command of QUICK_EXIT it ends at
    once, its output flushed: the teardown frees whatever the command made one object at a time (every
    finding and line of a whole-store check), which took longer than some of the check's own steps
    (16 ms at 10k memories, against 3). main() itself, which the tests call, never ends the process."""
    args_in = sys.argv[1:]
    if args_in and args_in[0] in QUICK_EXIT and "--duplicates" not in args_in:
        # Nor any cyclic garbage collection: what a whole-store check makes lives until the process ends,
        # and a collection once it resumed would go over all of it (made while none ran, it is all still
        # in the youngest generation: 3 ms at 10k memories, in the middle of the output). With
        # --duplicates the recall index is brought up to date afterwards, with collection as usual.
        import gc

        gc.disable()
    code = main(args_in)
    if args_in and args_in[0] in QUICK_EXIT:
        import os

        if "logging" in sys.modules:  # imported only once something was logged (see quiet_log)
            sys.modules["logging"].shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more can be said there
                pass
        os._exit(code)
    sys.exit(code)


def serve_main() -> int:
    """`kin-memory-lsp`: an alias of `kin-memory serve`."""
    return main(["serve", *sys.argv[1:]])
