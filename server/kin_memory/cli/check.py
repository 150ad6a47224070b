"""`kin-memory check`: diagnostics for a whole store, printed like a linter or as JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ..sinks import terminal
from .common import UsageError, settings_for

if TYPE_CHECKING:  # the checking machinery is imported when `check` runs, not to build the parser
    from ..findings.model import Finding


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("check", parents=[common], help="diagnostics for every file of the store")
    p.add_argument(
        "path", nargs="?", help="store root or a folder/file inside it (default: the resolved root)"
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--duplicates",
        action="store_true",
        help="also report near-duplicates (KM601) and possible contradictions (KM604) through the recall index (updated incrementally)",
    )
    p.add_argument(
        "--example-if-missing",
        action="store_true",
        help="check the bundled example store when the resolved store does not exist",
    )
    p.set_defaults(func=run)


def example_root() -> Path:
    """A fresh copy of the bundled example store, with the file ages its manifest asks for.

    Ages cannot ship inside a package (installs reset mtimes), so the copy gets them applied; the copy
    lives in a temporary folder so checking the example never writes into the installed package.
    """
    import shutil
    import tempfile
    import time

    source = Path(str(resources.files("kin_memory") / "example_store"))
    target = Path(tempfile.mkdtemp(prefix="kin-memory-example-")) / "memory"
    shutil.copytree(source, target)
    manifest = target / ".mtimes.json"
    ages = json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {}
    now = time.time()
    for rel, days in ages.items():
        path = target / rel
        if not rel.startswith("_") and path.is_file():
            os.utime(path, (now - days * 86400, now - days * 86400))
    return target


def run(args: argparse.Namespace) -> int:
    from ..findings.catalog import ERROR
    from ..findings.run import check_store
    from ..findings.store_level import scan_findings, settings_findings
    from ..store.context import cli_context
    from ..store.paths import real_path
    from ..store.root import resolve_root
    from ..store.store import load_store
    from ..store.workspace import cli_workspace

    target: Path | None = Path(os.path.abspath(os.path.expanduser(args.path))) if args.path else None
    root = resolve_root(args.root).path if args.root or not target else None
    only: Path | None = None
    if target is not None and root is None:
        if not target.exists():
            raise UsageError(f"no such file or folder: {args.path}")
        resolved = resolve_root(None).path
        real = Path(os.path.realpath(target))
        if real == resolved or resolved in real.parents:
            root, only = resolved, real
        else:
            root = real if real.is_dir() else real.parent
            only = None if real.is_dir() else real
    assert root is not None
    note = ""
    if not root.is_dir():
        if args.example_if_missing:
            note = f"no memory store at {terminal.field(root)}; checking the bundled example store instead"
            root = example_root()
        else:
            raise UsageError(f"memory store not found: {root} (set KIN_MEMORY_DIR or pass --root)")
    root = Path(os.path.realpath(root))
    workspace = cli_workspace(args.workspace, root)
    ctx = cli_context(root, workspace)
    store = load_store(root)
    results = check_store(store, ctx)
    if args.duplicates:
        _merge(results, _duplicates(root, store, ctx))
    _merge(results, scan_findings(store.scan_problems()))
    rows: list[tuple[str, Finding]] = []
    for vpath in sorted(results):
        path = real_path(root, vpath)
        if only is not None and only != path and only not in path.parents:
            continue
        rows += [(str(path), f) for f in results[vpath]]
    for settings_path, found in settings_findings(settings_for(workspace)).items():
        rows += [(str(settings_path), f) for f in found]
    if note:
        print(note, file=sys.stderr)
    if args.format == "json":
        print(json.dumps([_json(path, f) for path, f in rows], indent=2))
    else:
        _text(rows, len(results))
    if note:
        return 0  # the example store is broken on purpose: its findings are the demonstration
    return 1 if any(f.severity == ERROR for _, f in rows) else 0


def _duplicates(root: Path, store, ctx) -> dict[str, list[Finding]]:
    from ..findings.store_level import duplicate_findings
    from ..recall.service import Recall  # the index only when duplicates are asked for

    recall = Recall(root)
    recall.sync_memories(store.memories())
    return duplicate_findings(store, ctx, recall)


def _merge(results: dict[str, list[Finding]], more: dict[str, list[Finding]]) -> None:
    for vpath, found in more.items():
        results[vpath] = results.get(vpath, []) + found


def _json(path: str, f: Finding) -> dict:
    return {
        "path": path,
        "range": {
            "start": {"line": f.span.line, "character": f.span.col},
            "end": {"line": f.span.end_line, "character": f.span.end_col},
        },
        "code": f.code,
        "severity": f.severity,
        "message": f.message,
    }


def _text(rows: list[tuple[str, Finding]], files: int) -> None:
    cwd = os.getcwd()
    for path, f in rows:
        shown = os.path.relpath(path, cwd) if path.startswith(cwd + os.sep) else path
        print(
            f"{terminal.field(shown)}:{f.span.line + 1}:{f.span.col + 1}: {f.code} {f.severity}: {terminal.field(f.message)}"
        )
    counts: dict[str, int] = {}
    for _, f in rows:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    sys.stdout.flush()  # the summary goes to stderr: keep it after the findings when both share a terminal
    summary = (
        ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(counts.items())) or "no problems"
    )
    print(f"{files} files checked: {summary}", file=sys.stderr)
