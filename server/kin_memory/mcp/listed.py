"""The memories the MCP prompt block lists, kept between reads instead of every file read again.

`memory://prompt-block` needs each memory's path, category, stamp, title and age. Reading and parsing
every file for each read cost half a second at 10,000 memories. A process keeps the compact form of each
memory with the freshness key of its reading (store/freshness.py, the rule every cache uses) and, on the
next read, stats each file and reads only those whose key moved. The first read of a process takes what
the recall index already holds of a memory whose key is the one the index saw, so it too reads only the
files changed since the index was brought up to date.

Where the process watches the store (the MCP server: store/disk_changes.py), a later read does not even
stat every file: it takes in only the paths the watch reported since the last read (a file read again or
dropped; a folder listed again, what was below it dropped first), with the scan's own rule for what is a
memory file (store.scan.listed_at). When the watch cannot vouch, or reported more than a full pass would cost,
the read is the full pass above.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..store.disk_changes import Follower, SharedWatch
from ..store.freshness import key_at, unchanged
from ..store.frontmatter import Frontmatter
from ..store.memory import Memory, load
from ..store.paths import INDEX_NAME, INDEX_VPATH, relative_parts, virtual_of_rel
from ..store.scan import listed_at, scan_names

INVALID = ("invalid",)  # the index's scope None: a stamp no workspace matches
# Past this many reported paths, a full pass (a stat per memory) costs less than taking each in.
MAX_CHANGES = 2_000


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

    def __init__(self, root: Path, watch: SharedWatch | None = None) -> None:
        self.root = Path(os.path.realpath(root))
        self.lock = threading.Lock()
        self.held: dict[str, Memory] | None = None
        self.index: Memory | None = None
        # Its place is the moment the last read took in every change up to.
        self.follower = Follower(watch, "prompt block") if watch is not None else None

    def now(self) -> tuple[list[Memory], Memory | None]:
        """(every memory, MEMORY.md) as the disk holds them now; only changed files are read."""
        with self.lock:
            follower = self.follower
            changes = follower.changes() if follower is not None and self.held is not None else None
            if follower is not None and changes is not None and len(changes[1]) <= MAX_CHANGES:
                for path in sorted(changes[1]):
                    self._take_in(path)
                follower.take(changes[0])
            else:
                moment = follower.mark() if follower is not None else None  # before: nothing slips between
                self._full_pass()
                if follower is not None:
                    follower.take(moment)
            assert self.held is not None
            return list(self.held.values()), self.index

    def _full_pass(self) -> None:
        held = self.held if self.held is not None else _from_index(self.root)
        files, _problems = scan_names(self.root)
        fresh: dict[str, Memory] = {}
        index = None
        for path, vpath, is_index in files:
            if is_index:
                index = load(path, vpath, is_index=True)  # read whole: the block shows its lines
            else:
                fresh[vpath] = _kept_or_read(held.get(vpath), path, vpath)
        self.held, self.index = fresh, index

    def _take_in(self, path: str) -> None:
        """One reported path: a memory file read again (or dropped), a folder listed again (what it held
        dropped first, what is still there as it was kept)."""
        assert self.held is not None
        parts = relative_parts(self.root, Path(path))
        if not parts:
            return
        vpath = virtual_of_rel("/".join(parts))
        if parts == (INDEX_NAME,):  # a folder of that name is walked as any other, below
            read = os.path.isfile(path) and listed_at(self.root, path)
            self.index = load(path, INDEX_VPATH, is_index=True) if read else None
        was_memory = self.held.pop(vpath, None) is not None
        if os.path.isdir(path) and not os.path.islink(path):
            before = self._drop_below(vpath)
            for file, file_vpath, is_index in listed_at(self.root, path):
                if not is_index:
                    self.held[file_vpath] = _kept_or_read(before.get(file_vpath), file, file_vpath)
        elif os.path.lexists(path):
            for file, file_vpath, is_index in listed_at(self.root, path):
                if not is_index:
                    self.held[file_vpath] = load(file, file_vpath).compacted()
        elif not was_memory:  # gone, and no memory: perhaps a folder, and what was below it is gone too
            self._drop_below(vpath)

    def _drop_below(self, vpath: str) -> dict[str, Memory]:
        assert self.held is not None
        below = vpath + "/"
        dropped = {v: m for v, m in self.held.items() if v.startswith(below)}
        for v in dropped:
            del self.held[v]
        return dropped


def _kept_or_read(known: Memory | None, path: str, vpath: str) -> Memory:
    """The memory kept of a file while its freshness key is the one it was read with, else read again."""
    if known is not None and unchanged(known.key, key_at(path)):
        return known
    return load(path, vpath).compacted()
