"""`kin-memory search`, `kin-memory index-preview` and `kin-memory reindex`."""

from __future__ import annotations

import argparse
import sys
import time

from ..bounds import whole_arg
from ..sinks import terminal
from ..wording import counted
from .common import file_uri, print_json, target

MAX_RESULTS = 100


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("search", parents=[common], help="ranked recall over the store")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--json", action="store_true", help="print JSON: {results: [...]}")
    p.add_argument(
        "--limit",
        type=whole_arg(1, MAX_RESULTS),
        default=5,
        help=f"at most this many results (5; up to {MAX_RESULTS})",
    )
    p.set_defaults(func=search)

    p = subparsers.add_parser(
        "index-preview",
        parents=[common],
        help="the prompt block the agent would inline: listing plus MEMORY.md, capped",
    )
    p.add_argument("--json", action="store_true", help="print JSON: {text, lines, bytes, truncated, cut}")
    p.set_defaults(func=index_preview)

    p = subparsers.add_parser("reindex", parents=[common], help="rebuild the recall index from the files")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=reindex)


def search(args: argparse.Namespace) -> int:
    from ..recall.results import search_result
    from ..recall.service import Recall, incomplete, sync_quietly

    where = target(args)
    where.require_recall()
    recall = Recall(where.root, semantic=where.settings().recall_semantic)
    sync_quietly(recall)
    hits = recall.search(args.query, where.active, args.limit)
    problem = recall.unavailable()
    note = recall.semantic_note()
    if args.json:
        from ..store.paths import real_path

        def uri_of(vpath: str) -> str:
            return file_uri(real_path(where.root, vpath))

        print_json(search_result(hits, uri_of, complete=problem is None, note=note))
        return 0
    if note is not None:  # ranked by words only: the semantic layer is filling (`reindex` fills it)
        print(f"kin-memory: {terminal.field(note)} (kin-memory reindex fills it now)", file=sys.stderr)
    for h, snip in hits:
        print(f"{terminal.field(h.vpath)}  [{terminal.field(h.category)}]  {terminal.field(h.title)}")
        if snip:
            print(f"    {terminal.field(snip)}")
    if problem is not None:  # never a "no match" the index could not give: exit 2 when nothing was found
        print(f"kin-memory: {terminal.field(incomplete(problem))}", file=sys.stderr)
        return 0 if hits else 2
    if not hits:
        print("no matching memories", file=sys.stderr)
        return 1
    return 0


def index_preview(args: argparse.Namespace) -> int:
    from ..recall.results import cut_sentence, index_preview_result
    from ..store.prompt_block import compose
    from ..store.store import load_store

    where = target(args)
    where.require_recall()
    store = load_store(where.root)
    result = index_preview_result(compose(list(store.memories()), store.index_file(), where.active))
    if args.json:
        print_json(result)
        return 0
    print(terminal.block(result.text))
    note = f"{result.lines} lines, {result.bytes} bytes"
    if result.truncated:
        note += "; " + cut_sentence(result)
    if result.hidden:
        note += f"; {result.hidden} memories of other workspaces collapsed"
    print(f"-- {note}", file=sys.stderr)
    return 0


def reindex(args: argparse.Namespace) -> int:
    from ..recall.service import Recall

    where = target(args)
    recall = Recall(where.root, semantic=where.settings().recall_semantic)
    bar = _ProgressBar() if sys.stderr.isatty() and not args.json else None
    stats = recall.reindex(progress=bar.update if bar else None, chunk=500)
    if bar:
        bar.done()
    layer = recall.semantic()
    filled = 0.0
    if layer is not None:  # every memory's vector, one at a time (the index was just made anew)
        started = time.monotonic()
        bar = _ProgressBar(label="meaning") if sys.stderr.isatty() and not args.json else None
        layer.fill(progress=bar.update if bar else None)
        if bar:
            bar.done()
        filled = time.monotonic() - started
        if layer.problem is not None:
            print(f"kin-memory: semantic recall is off: {terminal.field(layer.problem)}", file=sys.stderr)
    if args.json:
        from ..protocol import ReindexResult

        print_json(ReindexResult(files=stats.read, seconds=round(stats.seconds, 3)))
    else:
        print(f"indexed {counted(stats.read, 'memory', 'memories')} in {stats.seconds:.2f} s")
        if layer is not None and layer.problem is None:
            print(f"semantic layer filled in {filled:.2f} s")
    return 0


class _ProgressBar:
    def __init__(self, width: int = 30, label: str = "") -> None:
        self.width = width
        self.label = f"{label} " if label else ""
        self.last = 0.0

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        filled = int(self.width * done / max(total, 1))
        sys.stderr.write(f"\r{self.label}[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total}")
        sys.stderr.flush()

    def done(self) -> None:
        sys.stderr.write("\n")
