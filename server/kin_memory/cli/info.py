"""`kin-memory info`: where the store is and how it was found (the editors' bootstrap asks this too)."""

from __future__ import annotations

import argparse

from ..sinks import terminal
from ..wording import counted
from .common import print_json, target


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "info", parents=[common], help="the store root, how it was found, settings files"
    )
    p.add_argument("--json", action="store_true", help="print the same JSON as the kin.memory.info command")
    p.add_argument(
        "--editor-memory-dir",
        metavar="DIR",
        help="the editor's memoryDir setting, resolved as the language server would (below KIN_MEMORY_DIR)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import protocol
    from ..recall.peek import peek_count
    from ..store.info import store_info

    where = target(args, editor_setting=args.editor_memory_dir)
    count = peek_count(where.root)
    state = protocol.IndexState(state="unavailable" if count is None else "ready", memories=count or 0)
    info = store_info(where.root_choice, where.active, where.settings(), state)
    if args.json:
        print_json(info)
        return 0
    print(f"store: {terminal.field(info.root)} (from {info.root_source})")
    print(f"workspaces: {', '.join(terminal.field(w) for w in info.workspaces) or 'none (operator view)'}")
    for f in info.settings_files:
        state_text = "missing" if not f.exists else f"{f.problems} problem(s)" if f.problems else "ok"
        print(f"{f.scope} settings: {terminal.field(f.path)} ({state_text})")
    print(
        f"recall index: {info.index_state.state}, {counted(info.index_state.memories, 'memory', 'memories')}"
    )
    print(f"memory: {'enabled' if info.memory_enabled else 'disabled'}")
    return 0
