"""The kept listing follows files created and deleted while the server runs, once the store is quiet."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import kin_memory.caches.listing as kept_listing
import kin_memory.lsp.listing_sync as listing_sync
from kin_memory.caches.findings import FindingsCache
from kin_memory.caches.listing import kept
from kin_memory.lsp.listing_sync import ListingSync
from kin_memory.lsp.scheduler import Scheduler
from kin_memory.store.events import StoreEvent, StoreEvents


@dataclass
class FakeSession:
    root: Path
    events: StoreEvents = field(default_factory=StoreEvents)


def write(root: Path, rel: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\ncategory: episodic\n---\nx\n", encoding="utf-8")


def listed(root: Path) -> set[str] | None:
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        found = kept(cache.conn, str(root))
    finally:
        cache.close()
    return None if found is None else {vpath for _, vpath, _ in found[0]}


def wait_for(check, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    return check()


def test_files_created_or_deleted_are_kept_once_the_store_is_quiet(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(listing_sync, "QUIET", 0.3)
    monkeypatch.setattr(kept_listing, "RACY_FINE", 0.2)
    root = tmp_path / "memory"
    for i in range(5):
        write(root, f"notes/deep/n{i}.md")
    FindingsCache.open(root).close()  # type: ignore[union-attr]
    session = FakeSession(root)
    ListingSync(session, Scheduler())  # type: ignore[arg-type]

    session.events.emit(StoreEvent("changed", "/memories/notes/deep/n1.md"))
    session.events.emit(StoreEvent("created", "/memories/notes/deep/n9.md", overlay=True))  # a buffer only
    time.sleep(1.0)
    assert listed(root) is None  # neither comes or goes on disk: no walk

    write(root, "notes/deep/new.md")
    (root / "notes" / "deep" / "n0.md").unlink()
    session.events.emit(StoreEvent("created", "/memories/notes/deep/new.md"))
    session.events.emit(StoreEvent("deleted", "/memories/notes/deep/n0.md"))
    got = wait_for(lambda: listed(root))
    assert got == {f"/memories/notes/deep/n{i}.md" for i in range(1, 5)} | {"/memories/notes/deep/new.md"}


def test_a_walk_still_due_at_shutdown_is_done_then(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(listing_sync, "QUIET", 60.0)
    monkeypatch.setattr(kept_listing, "RACY_FINE", 0.2)
    root = tmp_path / "memory"
    write(root, "notes/n1.md")
    FindingsCache.open(root).close()  # type: ignore[union-attr]
    session = FakeSession(root)
    sync = ListingSync(session, Scheduler())  # type: ignore[arg-type]
    write(root, "notes/n2.md")
    session.events.emit(StoreEvent("created", "/memories/notes/n2.md"))
    time.sleep(0.3)  # the folders are older than the racy window: the walk is kept without waiting
    sync.flush()
    assert listed(root) == {"/memories/notes/n1.md", "/memories/notes/n2.md"}
    sync.flush()  # nothing due any more: no walk


@pytest.mark.parametrize("window", ["real", "longer than shutdown may wait"])
def test_a_walk_due_at_shutdown_right_after_a_change_waits_only_briefly(
    tmp_path: Path, monkeypatch, window: str
) -> None:
    monkeypatch.setattr(listing_sync, "QUIET", 60.0)
    if window != "real":
        monkeypatch.setattr(kept_listing, "RACY_FINE", 1.0)
    root = tmp_path / "memory"
    write(root, "notes/n1.md")
    FindingsCache.open(root).close()  # type: ignore[union-attr]
    session = FakeSession(root)
    sync = ListingSync(session, Scheduler())  # type: ignore[arg-type]
    write(root, "notes/n2.md")
    session.events.emit(StoreEvent("created", "/memories/notes/n2.md"))
    started = time.monotonic()
    sync.flush()  # at once: the folder changed a moment ago
    took = time.monotonic() - started
    assert took < listing_sync.SHUTDOWN_WAIT + 0.3
    if window == "real":
        assert listed(root) == {"/memories/notes/n1.md", "/memories/notes/n2.md"}
    else:
        assert listed(root) is None
