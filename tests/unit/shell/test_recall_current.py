"""When a search may trust the recall index: once it matched the files (found by the start-up front,
before the store is adopted, or by the first sync) and no change waits to be indexed. MEMORY.md, which
is never indexed, does not make the index look behind."""

from __future__ import annotations

import threading
from pathlib import Path

from kin_memory.lsp.recall_sync import RecallSync
from kin_memory.lsp.scheduler import Scheduler
from kin_memory.lsp.session import Session
from support.memfiles import memory, write


def test_the_fronts_finding_is_enough_and_memory_md_is_not_a_pending_change(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "facts/a.md", memory("project-fact", "# A\n\nalpha\n"))
    session = Session(str(root))
    synced = threading.Event()
    scheduler = Scheduler()
    sync = RecallSync(session, scheduler, lambda *a: None, lambda message: None, synced=synced)
    assert not sync.wait_current(0)  # nothing said the index matched yet
    synced.set()  # what the front does when the workers found the index current
    assert not session.ready.is_set()
    assert sync.wait_current(0)  # the store's adoption is not waited for
    index = write(root, "MEMORY.md", "- [A](facts/a.md)\n")
    session.store.refresh_path(index)  # what the start-up does to check MEMORY.md
    assert sync.wait_current(0)
    write(root, "facts/b.md", memory("project-fact", "# B\n\nbeta\n"))
    session.store.refresh_path(root / "facts" / "b.md")
    assert sync.wait_current(10)  # once indexed
    assert [hit.vpath for hit, _ in sync.recall.search("beta", ())] == ["/memories/facts/b.md"]
    scheduler.shutdown(wait=True)
