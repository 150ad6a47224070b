"""Issue 35, item 1 (recall side): the index judges a memory unchanged by the one freshness rule
(store/freshness.py), not by (mtime, size). `tar -x`, `rsync -t`, `cp -p` and sync clients rewrite a file
at the same size and put its old mtime back: such a memory is read again by every sync, and a start's
look at the index (recall/peek.py) counts it as changed."""

from __future__ import annotations

import os
from pathlib import Path

from kin_memory.recall.peek import Lag
from kin_memory.recall.service import Recall
from kin_memory.store.freshness import key_at
from kin_memory.store.store import load_store
from support.memfiles import memory, write

VPATH = "/memories/facts/codeword.md"


def _indexed_then_rewritten(store: Path) -> None:
    """A memory holding "alpha" is indexed, then rewritten at the same size with "omega" and given back
    its old mtime (its ctime and the key move; (mtime, size) do not)."""
    write(store, "facts/other.md", memory("project-fact", "# Other\n\nNothing to see here.\n"))
    path = write(store, "facts/codeword.md", memory("project-fact", "# Codeword\n\nThe codeword is alpha.\n"))
    first = Recall(store)
    first.sync_disk()
    assert [h.vpath for h, _ in first.search("alpha", None)] == [VPATH]
    first.index.close()
    st = os.stat(path)
    path.write_text(memory("project-fact", "# Codeword\n\nThe codeword is omega.\n"), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = os.stat(path)
    assert (again.st_mtime_ns, again.st_size) == (st.st_mtime_ns, st.st_size)


def test_a_same_size_rewrite_with_its_old_mtime_is_read_again_from_the_files(store: Path) -> None:
    _indexed_then_rewritten(store)
    recall = Recall(store)
    stats = recall.sync_disk()
    assert stats.read == 1 and stats.files == 2
    assert [h.vpath for h, _ in recall.search("omega", None)] == [VPATH]
    assert recall.search("alpha", None) == []


def test_a_same_size_rewrite_with_its_old_mtime_is_read_again_from_parsed_memories(store: Path) -> None:
    """The server's door: memories the store already parsed, each carrying the key of its reading."""
    _indexed_then_rewritten(store)
    recall = Recall(store)
    stats = recall.sync_memories(load_store(store).disk_memories())
    assert stats.read == 1
    assert [h.vpath for h, _ in recall.search("omega", None)] == [VPATH]
    assert recall.search("alpha", None) == []


def test_a_start_counts_a_same_size_rewrite_as_changed(store: Path) -> None:
    _indexed_then_rewritten(store)
    lag = Lag(store, keep=10)
    try:
        keys = [
            (f"/memories/facts/{name}", key_at(store / "facts" / name))
            for name in ("other.md", "codeword.md")
        ]
        lag.add([(vpath, key) for vpath, key in keys if key is not None])
        assert (lag.matched, lag.changed, lag.changed_vpaths) == (2, 1, [VPATH])
    finally:
        lag.close()


def test_an_unchanged_memory_is_not_read_again(store: Path) -> None:
    """The rule still spares what did not change: a second sync reads nothing."""
    write(store, "facts/codeword.md", memory("project-fact", "# Codeword\n\nThe codeword is alpha.\n"))
    Recall(store).sync_disk()
    assert Recall(store).sync_disk().read == 0
