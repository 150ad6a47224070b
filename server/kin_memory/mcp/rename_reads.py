"""Which memories a rename must read, in a long-lived process, without a stat of every file: those the recall
index says name the old path (its references, store/references.py), those whose references it does not
know, and whatever the watch reported changed since the index was last brought up to date (a changed
folder: every memory below it). MEMORY.md is always read (its links are relative).

So a rename costs two index lookups and the reading of a handful of files whatever the store's size. When
the watch cannot vouch for what changed, the answer is None and the rename looks at every file itself
(tool/relink.py), as the command line and the SDK class do.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from ..store.disk_changes import DiskChanges, SharedWatch
from ..store.paths import INDEX_VPATH, is_hidden, is_memory_rel, real_path, relative_parts, virtual_of_rel
from ..store.scan import ScanTree, scan_folder

# Past this many changed paths since the index was brought up to date, bring it up to date again (a stat per
# memory, once) rather than read them all at each rename.
RESYNC_AFTER_CHANGES = 500

Files = list[tuple[str, str, bool]]  # (path, virtual path, is MEMORY.md): what a scan lists


class RenameReads:
    """The watch and the moment the index was last brought up to date, for one store."""

    def __init__(self, root: Path, watch: SharedWatch, sync_index: Callable[[], bool]) -> None:
        self.root = Path(os.path.realpath(root))
        self.shared = watch
        self.sync_index = sync_index  # brings the recall index up to date; whether it could
        self.lock = threading.Lock()
        self.seen_by: DiskChanges | None = None  # the watch `baseline` is a report of
        self.baseline: int | None = None  # the report after which changes are not in the index

    def files(self, old: str) -> Files | None:
        """The memories a rename of `old` must read; None when they cannot be told apart from the rest."""
        from ..recall.peek import naming

        with self.lock:
            watch = self.shared.get()
            if watch is None:
                return None
            if (watch is not self.seen_by or self.baseline is None) and not self.synced_now():
                return None
            assert self.baseline is not None
            since = watch.changed_since(self.baseline)
            if since is not None and len(since[1]) > RESYNC_AFTER_CHANGES and self.synced_now():
                since = watch.changed_since(self.baseline)
            told = naming(self.root, old) if since is not None else None
            if since is None or told is None:
                self.baseline = None
                return None
        changed = since[1]
        named, unknown = told
        picked: dict[str, tuple[str, str, bool]] = {}
        for vpath in named | unknown:
            picked[vpath] = (str(real_path(self.root, vpath)), vpath, False)
        index = self.root / "MEMORY.md"
        picked[INDEX_VPATH] = (str(index), INDEX_VPATH, True)
        for path in changed:
            for found in self._memories_at(path):
                picked[found[1]] = found
        return sorted(picked.values(), key=lambda f: f[1])

    def synced_now(self) -> bool:
        """Bring the index up to date, from a moment the watch vouches for when it can; whether both held
        (the caller holds the lock)."""
        watch = self.shared.get()
        mark = watch.flush() if watch is not None else None
        if not self.sync_index() or watch is None or mark is None:
            self.baseline = None
            return False
        self.seen_by, self.baseline = watch, mark
        watch.hold("recall index", mark)
        return True

    def _memories_at(self, path: str) -> Files:
        """The memory files a reported path stands for: itself, or every one below a folder."""
        parts = relative_parts(self.root, Path(path))
        if not parts or is_hidden(parts):
            return []
        if is_memory_rel(parts):
            return [(path, virtual_of_rel("/".join(parts)), False)]
        if os.path.isdir(path) and not os.path.islink(path):
            found, _problems, _children = scan_folder(self.root, path, set(), ScanTree())
            return [f for f in found if not f[2]]
        return []
