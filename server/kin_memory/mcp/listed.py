"""The memories the MCP prompt block lists, kept between reads instead of every file read again.

`memory://prompt-block` needs each memory's path, category, stamp, title and age. Reading and parsing
every file for each read cost half a second at 10,000 memories. A process keeps the compact form of each
memory with the freshness key of its reading (store/freshness.py, the rule every cache uses) and, on the
next read, stats each file and reads only those whose key moved. The first read of a process takes what
the recall index already holds of a memory whose key is the one the index saw, so it too reads only the
files changed since the index was brought up to date.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..store.freshness import key_at, unchanged
from ..store.frontmatter import Frontmatter
from ..store.memory import Memory, load
from ..store.scan import scan_names

INVALID = ("invalid",)  # the index's scope None: a stamp no workspace matches


def _from_index(root: Path) -> dict[str, Memory]:
    from ..recall.peek import listed_docs

    out: dict[str, Memory] = {}
    for vpath, key, title, category, workspace, scope, mtime, size in listed_docs(root) or []:
        stamp = INVALID if scope is None else workspace
        out[vpath] = Memory(
            "", vpath, "", (), Frontmatter("ok"), category, category, stamp, mtime, size,
            compact=True, kept_title=title, key=key,
        )  # fmt: skip
    return out


class Listed:
    """One store's memories as last seen by this process (compact), brought up to date on each ask."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self.lock = threading.Lock()
        self.held: dict[str, Memory] | None = None

    def now(self) -> tuple[list[Memory], Memory | None]:
        """(every memory, MEMORY.md) as the disk holds them now; only changed files are read."""
        with self.lock:
            held = self.held if self.held is not None else _from_index(self.root)
            files, _problems = scan_names(self.root)
            fresh: dict[str, Memory] = {}
            index = None
            for path, vpath, is_index in files:
                if is_index:
                    index = load(path, vpath, is_index=True)  # read whole: the block shows its lines
                    continue
                known = held.get(vpath)
                if known is None or not unchanged(known.key, key_at(path)):
                    known = load(path, vpath).compacted()
                fresh[vpath] = known
            self.held = fresh
            return list(fresh.values()), index
