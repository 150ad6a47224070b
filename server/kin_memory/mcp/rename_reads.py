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

from ..store.disk_changes import Follower, SharedWatch
from ..store.paths import INDEX_VPATH, real_path
from ..store.scan import listed_at

# Past this many changed paths since the index was brought up to date, bring it up to date again (a stat per
# memory, once) rather than read them all at each rename.
RESYNC_AFTER_CHANGES = 500

Files = list[tuple[str, str, bool]]  # (path, virtual path, is MEMORY.md): what a scan lists


class RenameReads:
    """The watch and the moment the index was last brought up to date, for one store."""

    def __init__(self, root: Path, watch: SharedWatch, sync_index: Callable[[], bool]) -> None:
        self.root = Path(os.path.realpath(root))
        self.sync_index = sync_index  # brings the recall index up to date; whether it could
        self.lock = threading.Lock()
        # Its place is the moment the index was last brought up to date from: a rename moves it not.
        self.follower = Follower(watch, "recall index")

    def files(self, old: str) -> Files | None:
        """The memories a rename of `old` must read; None when they cannot be told apart from the rest."""
        from ..recall.peek import naming

        with self.lock:
            changes = self.follower.changes()
            if changes is None:
                if not self.synced_now():
                    return None
                changes = self.follower.changes()
            elif len(changes[1]) > RESYNC_AFTER_CHANGES and self.synced_now():
                changes = self.follower.changes()
            told = naming(self.root, old) if changes is not None else None
            if changes is None or told is None:
                self.follower.take(None)
                return None
        named, unknown = told
        picked: dict[str, tuple[str, str, bool]] = {}
        for vpath in named | unknown:
            picked[vpath] = (str(real_path(self.root, vpath)), vpath, False)
        index = self.root / "MEMORY.md"
        picked[INDEX_VPATH] = (str(index), INDEX_VPATH, True)
        for path in changes[1]:
            for found in listed_at(self.root, path):
                if not found[2]:
                    picked[found[1]] = found
        return sorted(picked.values(), key=lambda f: f[1])

    def synced_now(self) -> bool:
        """Bring the index up to date, from a moment the watch vouches for when it can; whether both held
        (the caller holds the lock)."""
        moment = self.follower.mark()
        synced = self.sync_index()
        self.follower.take(moment if synced else None)
        return synced and moment is not None
