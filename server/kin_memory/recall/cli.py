"""`kin-memory search`, `kin-memory index-preview` and `kin-memory reindex`."""

from __future__ import annotations

import argparse
import json
import sys
import time


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser("search", parents=[common], help="ranked recall over the store")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--json", action="store_true", help="print JSON: {results: [...]}")
    p.add_argument("--limit", type=int, default=5)
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


def _root_and_active(args) -> tuple:
    from ..store.root import resolve_root
    from ..store.workspace import cli_workspace

    root = resolve_root(args.root).path
    workspace = cli_workspace(args.workspace, root)
    return root, (workspace,) if workspace else ()


def search(args) -> int:
    from ..cli import UsageError
    from ..store.paths import real_path
    from .service import Recall

    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    root, active = _root_and_active(args)
    recall = Recall(root)
    recall.sync_disk()
    hits = recall.search(args.query, active, min(args.limit, 100))
    if args.json:
        print(
            json.dumps(
                {
                    "results": [
                        {
                            "path": h.vpath,
                            "uri": real_path(root, h.vpath).as_uri(),
                            "category": h.category,
                            "workspace": h.workspace,
                            "title": h.title,
                            "snippet": snip,
                            "score": float(f"{h.score:.6g}"),
                        }
                        for h, snip in hits
                    ]
                },
                ensure_ascii=False,
            )
        )
        return 0
    if not hits:
        print("no matching memories", file=sys.stderr)
        return 1
    for h, snip in hits:
        print(f"{h.vpath}  [{h.category}]  {_printable(h.title)}")
        if snip:
            print(f"    {_printable(snip)}")
    return 0


def _printable(text: str) -> str:
    # Memory text is untrusted: no terminal escape sequences reach the user's terminal.
    return "".join(ch if ch.isprintable() else "\N{REPLACEMENT CHARACTER}" for ch in text)


def index_preview(args) -> int:
    from ..context import load_store
    from ..store.prompt_block import compose

    root, active = _root_and_active(args)
    store = load_store(root)
    block = compose(list(store.memories()), store.index_file(), active)
    text = block.text
    cut = len(block.lines) - block.kept
    if args.json:
        print(
            json.dumps(
                {
                    "text": text,
                    "lines": block.kept,
                    "bytes": len(text.encode("utf-8")),
                    "truncated": block.truncated,
                    "cut": cut,
                    "hidden": block.hidden,
                },
                ensure_ascii=False,
            )
        )
        return 0
    print(_printable_block(text))
    size = len(text.encode("utf-8"))
    note = f"{block.kept} lines, {size} bytes"
    if block.truncated:
        cap = "200-line" if block.cut_reason == "lines" else "25 KB"
        note += f"; {cut} more lines cut by the {cap} cap"
    if block.hidden:
        note += f"; {block.hidden} memories of other workspaces collapsed"
    print(f"-- {note}", file=sys.stderr)
    return 0


def _printable_block(text: str) -> str:
    return "\n".join(_printable(line) for line in text.split("\n"))


def reindex(args) -> int:
    from .service import Recall

    root, _ = _root_and_active(args)
    recall = Recall(root)
    bar = _ProgressBar() if sys.stderr.isatty() and not args.json else None
    stats = recall.reindex(progress=bar.update if bar else None, chunk=500)
    if bar:
        bar.done()
    if args.json:
        print(json.dumps({"files": stats.read, "seconds": round(stats.seconds, 3)}))
    else:
        print(f"indexed {stats.read} memories in {stats.seconds:.2f}s")
    return 0


class _ProgressBar:
    def __init__(self, width: int = 30) -> None:
        self.width = width
        self.last = 0.0

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        filled = int(self.width * done / max(total, 1))
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total}")
        sys.stderr.flush()

    def done(self) -> None:
        sys.stderr.write("\n")
