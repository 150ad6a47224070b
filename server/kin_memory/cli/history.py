"""`kin-memory history PATH`, `restore PATH VERSION`, `changes`, `accept PATH…|--all`, `revert PATH…|--all`:
every version the store kept, and what changed since the user last looked.

The same version database the language server writes (in the store's hidden folder): a change made by
the agent while no editor ran is caught up with first, so the command line sees what the editor sees.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..history.labels import written_by
from ..sinks import terminal
from ..wording import counted
from .common import UsageError, file_uri, memory_vpath, print_json, target


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "history", parents=[common], help="the kept versions of a memory (with N: one of them)"
    )
    p.add_argument(
        "path", metavar="PATH", help="a memory: /memories/..., its file's path, or its path in the store"
    )
    p.add_argument("version", metavar="N", type=int, nargs="?", help="print the content of kept version N")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_history)
    p = subparsers.add_parser("restore", parents=[common], help="write a kept version of a memory back")
    p.add_argument(
        "path", metavar="PATH", help="a memory: /memories/..., its file's path, or its path in the store"
    )
    p.add_argument("version", metavar="VERSION", type=int)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_restore)
    p = subparsers.add_parser("changes", parents=[common], help="what changed since it was last reviewed")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_changes)
    for name, help_text in (("accept", "mark changes reviewed"), ("revert", "bring memories back to their reviewed content")):  # fmt: skip
        p = subparsers.add_parser(name, parents=[common], help=help_text)
        p.add_argument("paths", nargs="*", metavar="PATH")
        p.add_argument("--all", action="store_true", help="every change of the queue")
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=run_accept if name == "accept" else run_revert)


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _catch_up(root) -> None:
    from ..history.db import HistoryUnavailable
    from ..history.sync import catch_up

    try:
        catch_up(root)
    except HistoryUnavailable as exc:
        raise UsageError(f"the memory history cannot be used: {exc.reason}") from None


def run_history(args: argparse.Namespace) -> int:
    from .. import protocol
    from ..history.query import HistoryError, current_version, history_of

    root = target(args).root
    args.path = memory_vpath(root, args.path)
    _catch_up(root)
    if args.version is not None:
        from ..history.query import content_of

        try:
            data = content_of(root, args.path, args.version)
        except HistoryError as exc:
            raise UsageError(str(exc)) from None
        sys.stdout.write(terminal.block(data.decode("utf-8", "replace")))  # a terminal's escapes never pass
        return 0
    try:
        found = history_of(root, args.path)
    except HistoryError as exc:
        raise UsageError(str(exc)) from None
    current = current_version(root, args.path, found)
    if args.json:
        print_json(protocol.HistoryResult(path=args.path, versions=[
            protocol.HistoryVersion(version=v.version, time=v.time, source=v.source, by=written_by(v.source),
                                    bytes=v.bytes, deleted=v.deleted) for v in found], current=current))  # fmt: skip
        return 0
    if not found:
        print(terminal.field(f"no versions kept of {args.path}"), file=sys.stderr)
        return 1
    for v in found:
        what = "deleted" if v.deleted else f"{v.bytes} bytes"
        now = " (now)" if v.version == current else ""
        print(terminal.field(f"{v.version:>6}  {_when(v.time)}  {what}, {written_by(v.source)}{now}"))
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from .. import protocol
    from ..history.query import HistoryError
    from ..history.restore import restore

    root = target(args).root
    args.path = memory_vpath(root, args.path)
    _catch_up(root)  # what is there now is kept before it is replaced
    try:
        written = restore(root, args.path, args.version)
    except HistoryError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print_json(protocol.RestoreResult(path=args.path, bytes=written))
    else:
        print(
            terminal.field(f"restored {args.path} to version {args.version} ({written} bytes)"),
            file=sys.stderr,
        )
    return 0


def run_changes(args: argparse.Namespace) -> int:
    from .. import protocol
    from ..history.query import HistoryError
    from ..history.review import changes

    t = target(args)
    _catch_up(t.root)
    try:
        found = changes(t.root)
    except HistoryError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print_json(protocol.ChangesResult(changes=[
            protocol.QueueEntry(path=c.path, uri=file_uri(t.root / c.path[len("/memories/"):]), kind=c.kind,
                                since=c.since, source=c.source, by=written_by(c.source), diff=c.diff, version=c.version,
                                reviewed_version=c.reviewed_version)
            for c in found]))  # fmt: skip
        return 0
    for c in found:
        print(terminal.field(f"{c.kind:<8} {c.path}  {written_by(c.source)}, since {_when(c.since)}"))
        sys.stdout.write(terminal.block(c.diff))
    if not found:
        print("no changes since the last review", file=sys.stderr)
    sys.stdout.flush()
    return 0


def _paths(args: argparse.Namespace) -> list[str] | None:
    if args.all:
        return None
    if not args.paths:
        raise UsageError("name the memories to apply this to, or pass --all")
    return list(args.paths)


def run_accept(args: argparse.Namespace) -> int:
    from .. import protocol
    from ..history.query import HistoryError
    from ..history.review import accept

    root = target(args).root
    _catch_up(root)
    paths = _paths(args)
    try:
        done = accept(root, paths)
    except HistoryError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print_json(protocol.PathsResult(paths=done))
    else:
        print(f"accepted {counted(len(done), 'change')}", file=sys.stderr)
    return 0


def run_revert(args: argparse.Namespace) -> int:
    from .. import protocol
    from ..history.query import HistoryError
    from ..history.review import changes, revert

    root = target(args).root
    _catch_up(root)
    paths = _paths(args)
    if paths is None:
        paths = [c.path for c in changes(root)]
    done, conflicts = [], []
    for vpath in paths:
        try:
            revert(root, vpath)
            done.append(vpath)
        except HistoryError as exc:
            conflicts.append(protocol.Conflict(path=vpath, reason=str(exc)))
    if args.json:
        print_json(protocol.PathsResult(paths=done, conflicts=conflicts))
    else:
        for c in conflicts:
            print(terminal.field(f"not reverted: {c.path}: {c.reason}"), file=sys.stderr)
        print(f"reverted {counted(len(done), 'memory', 'memories')}", file=sys.stderr)
    return 1 if conflicts else 0
