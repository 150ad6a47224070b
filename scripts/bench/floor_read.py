"""The read+parse floor: list the store's memory files, read each and parse its frontmatter.

What any check of the store must do when nothing is cached, with the package's own reader and parser
(``kin_memory.store.memory.load``). The bench runs it as a process of its own, like ``kin-memory check``,
and times it from spawn to exit; it prints one JSON line (files loaded, seconds inside the process).

    python floor_read.py <store root>
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from kin_memory.store.memory import load

INDEX_FILE = "MEMORY.md"


def memory_files(root: str, rel: str = "") -> Iterator[tuple[str, str]]:
    """(path, relative posix path) of every *.md file below root; hidden names and symlinked folders
    are skipped, as the store's own scan skips them."""
    with os.scandir(os.path.join(root, rel) if rel else root) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                yield from memory_files(root, child)
            elif entry.name.endswith(".md"):
                yield entry.path, child


def read_and_parse(root: str) -> int:
    loaded = 0
    for path, rel in memory_files(root):
        load(Path(path), "/memories/" + rel, is_index=rel == INDEX_FILE)
        loaded += 1
    return loaded


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    files = read_and_parse(argv[1])
    print(json.dumps({"files": files, "in_process_s": round(time.perf_counter() - started, 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
