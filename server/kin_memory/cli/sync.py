"""`kin-memory sync`: the store synced through git, the same as the `kin.memory.sync` command.

kin-memory sync --remote URL      # once: where the store's repository lives (a folder, ssh, https)
kin-memory sync                   # commit, fetch, merge, push; says what came in, went out, conflicted
kin-memory sync --keep mine PATH  # settle a conflict: this machine's version (or `theirs`)
"""

from __future__ import annotations

import argparse

from ..sinks import terminal
from .common import UsageError, print_json, target


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "sync",
        parents=[common],
        help="sync the store with its git remote: commit, fetch, merge, push (conflicts never leave "
        "markers in a memory)",
    )
    p.add_argument(
        "--remote", metavar="URL", help="set the store's remote once (a folder, ssh or https address)"
    )
    p.add_argument(
        "--keep",
        choices=("mine", "theirs"),
        help="settle the conflict on PATH: keep this machine's version or the other machine's",
    )
    p.add_argument(
        "--name",
        metavar="NAME",
        help="this machine's name as the other machines see it (default: the host name)",
    )
    p.add_argument("path", nargs="?", help="with --keep: the memory in conflict (/memories/… or a file path)")
    p.add_argument("--json", action="store_true", help="print the same JSON as the kin.memory.sync command")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..gitsync.door import resolve_conflict, run_sync
    from ..gitsync.git import SyncError

    where = target(args)
    if args.remote is not None and not where.root.exists():
        where.root.mkdir(
            mode=0o700, parents=True
        )  # a fresh machine: the store is made to receive the memories
    try:
        if args.name is not None:
            _rename(where.root, args.name)
        if args.keep or args.path:
            if not (args.keep and args.path):
                raise UsageError(
                    "--keep needs the memory in conflict, and a memory needs --keep mine or theirs"
                )
            resolve_conflict(where.root, _vpath(args.path, where.root), args.keep)
            print(f"kept {'this machine' if args.keep == 'mine' else 'the other machine'}'s version of "
                  f"{terminal.field(_vpath(args.path, where.root))}; the next sync sends it out")  # fmt: skip
            return 0
        result = run_sync(where.root, [where.workspace] if where.workspace else [], args.remote)
    except SyncError as exc:
        print(f"kin-memory: {terminal.field(exc.message)}")
        return 1
    if result.needs_remote and not args.json:
        from ..gitsync.engine import NO_REMOTE

        print(f"kin-memory: {NO_REMOTE}")
        return 1
    if args.json:
        print_json(result)
    else:
        for line in result.summary:
            print(terminal.field(line))
    return 1 if result.conflicts else 0


def _rename(root, name: str) -> None:
    from ..gitsync.git import SyncError
    from ..store.machine import MachineError, rename_machine

    if not name.strip():
        raise UsageError("--name: give a name for this machine, such as laptop")
    try:
        rename_machine(root, name)
    except MachineError as exc:
        raise SyncError(exc.message) from None


def _vpath(arg: str, root) -> str:
    """The memory in conflict, named as `history` and `check` take it (common.memory_vpath)."""
    from .common import memory_vpath

    return memory_vpath(root, arg)
