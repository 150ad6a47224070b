"""`kin-memory check`: diagnostics for a whole store, printed like a linter or as JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sinks import terminal
from ..wording import counted
from .common import UsageError, settings_for, workspace_flag

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
    from ..findings.store_level import settings_findings
    from ..store.context import cli_context
    from ..store.root import resolve_root

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
    workspace = workspace_flag(args.workspace, root)
    ctx = cli_context(root, workspace)
    if args.duplicates or note:  # KM601 reads the recall index: not answered from a summary
        part = _store_part(root, ctx, only, args.format, args.duplicates)[0]
    else:
        part = _summarised_store_part(root, ctx, only, args.format)
    settings_rows: list[tuple[str, Finding]] = []
    for settings_path, found in settings_findings(settings_for(workspace)).items():
        settings_rows += [(str(settings_path), f) for f in found]
    extra = _render(settings_rows, args.format)
    if note:
        print(note, file=sys.stderr)
    if args.format == "json":
        print(json.dumps(part.out + extra.out, indent=2))
    else:
        sys.stdout.write(part.out + extra.out)
        _summary(_add(part.counts, extra.counts), part.files)
    if note:
        return 0  # the example store is broken on purpose: its findings are the demonstration
    return 1 if ERROR in part.counts or ERROR in extra.counts else 0


@dataclass
class Part:
    """Printed rows of a check, ready to be joined with others: the text (or the JSON objects), the
    count per severity and how many files were checked."""

    out: Any
    counts: dict[str, int]
    files: int = 0


def _store_part(root: Path, ctx, only: Path | None, fmt: str, duplicates: bool):
    from ..findings.store_level import scan_findings
    from ..store.root import VIRTUAL_ROOT

    store, results, checked = check_through_cache(root, ctx)
    if duplicates:
        _merge(results, _duplicates(root, store, ctx))
    _merge(results, scan_findings(store.scan_problems()))
    rows: list[tuple[str, Finding]] = []
    prefix = str(root)  # the store's paths by string: a Path per file costs more than the check itself
    for vpath in sorted(results):
        if not results[vpath]:
            continue
        path = prefix + vpath[len(VIRTUAL_ROOT) :]
        if only is not None and only != Path(path) and only not in Path(path).parents:
            continue
        rows += [(path, f) for f in results[vpath]]
    part = _render(rows, fmt)
    part.files = len(results)
    return part, store, checked


def _summarised_store_part(root: Path, ctx, only: Path | None, fmt: str) -> Part:
    """The store's part of the output, from the summary of the last identical check when every file's
    (mtime, size) is what it was then and no finding can have changed since (a stat per file)."""
    import hashlib

    from ..findings.cache import FindingsCache, variant_key
    from ..findings.cached import stat_of
    from ..store.store import scan_names

    cache = FindingsCache.open(root)
    files, _ = scan_names(root)
    listing = "\n".join(f"{vpath}\0{stat_of(path)}" for path, vpath, _ in sorted(files, key=lambda f: f[1]))
    how = f"{variant_key(ctx, 'cli')}\n{fmt}\n{os.getcwd()}\n{only}\n"
    key = hashlib.sha256((how + listing).encode("utf-8", "surrogatepass")).hexdigest()
    try:
        saved = cache.summary(key, ctx.now) if cache is not None else None
        if saved is not None:
            try:
                data = json.loads(saved)
                return Part(data["out"], data["counts"], data["files"])
            except (ValueError, KeyError, TypeError):
                pass
        part, store, checked = _store_part(root, ctx, only, fmt, False)
        if cache is not None and checked.valid_until > ctx.now and not store.scan_problems():
            output = json.dumps({"out": part.out, "counts": part.counts, "files": part.files}).encode()
            cache.put_summary(key, ctx.now, checked.valid_until, checked.probes, output)
        return part
    finally:
        if cache is not None:
            cache.close()


def _render(rows: list[tuple[str, Finding]], fmt: str) -> Part:
    counts: dict[str, int] = {}
    for _, f in rows:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    if fmt == "json":
        return Part([_json(path, f) for path, f in rows], counts)
    here = os.getcwd().rstrip(os.sep) + os.sep
    lines = []
    for path, f in rows:
        shown = path[len(here) :] if path.startswith(here) else path
        lines.append(
            f"{terminal.field(shown)}:{f.span.line + 1}:{f.span.col + 1}: {f.code} {f.severity}: {terminal.field(f.message)}\n"
        )
    return Part("".join(lines), counts)


def _add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}}


def _summary(counts: dict[str, int], files: int) -> None:
    sys.stdout.flush()  # the summary goes to stderr: keep it after the findings when both share a terminal
    summary = (
        ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(counts.items())) or "no problems"
    )
    print(f"{counted(files, 'file')} checked: {summary}", file=sys.stderr)


def check_through_cache(root: Path, ctx) -> tuple[Any, dict[str, list[Finding]], Any]:
    """(the store, vpath → findings, the CachedCheck) for every file, unchanged files answered by the
    findings cache (a stat each); what had to be checked is written back for the next run."""
    from ..findings.cache import FindingsCache
    from ..findings.cached import check_files
    from ..findings.run import check_memory
    from ..store.memory import load
    from ..store.paths import INDEX_VPATH
    from ..store.prompt_block import compose
    from ..store.store import Store, scan_names

    files, problems = scan_names(root)
    cache = FindingsCache.open(root)
    try:
        memories = [(path, vpath) for path, vpath, is_index in files if not is_index]
        checked = check_files(memories, ctx, "cli", _payload, cache)
        assert checked is not None  # nothing to abandon
        disk = {c.vpath: c.memory for c in checked.checked if c.memory is not None}
        results = {c.vpath: _decode(c.payload) for c in checked.checked if c.memory is not None}
        index_path = next((path for path, _, is_index in files if is_index), None)
        if index_path is not None:
            index = load(index_path, INDEX_VPATH, is_index=True)
            listed = list(disk.values())
            block = compose(listed, index, ctx.active)
            results[INDEX_VPATH] = check_memory(index, ctx, block=block, known=set(disk))
            disk[INDEX_VPATH] = index
        store = Store(root)
        store.adopt(disk, problems)
        checked.write_back(cache, ctx.now)
    finally:
        if cache is not None:
            cache.close()
    return store, results, checked


def _payload(memory, findings: list[Finding]) -> bytes:
    """The CLI's form of a file's findings in the cache: what `check` prints, nothing more."""
    if not findings:
        return b""
    rows = [
        [f.code, f.severity, f.message, f.span.line, f.span.col, f.span.end_line, f.span.end_col]
        for f in findings
    ]
    return json.dumps(rows).encode()


def _decode(payload: bytes) -> list[Finding]:
    from ..findings.model import Finding
    from ..store.frontmatter import Span

    if not payload:
        return []
    return [
        Finding(code, Span(line, col, end_line, end_col), message, severity=severity)
        for code, severity, message, line, col, end_line, end_col in json.loads(payload)
    ]


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
