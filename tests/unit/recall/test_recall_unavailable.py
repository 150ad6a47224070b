"""Issue 33, item 7 (recall side): an index that cannot be used says why, so every door can answer
"incomplete" instead of a sure "no match": its hidden folder a link, or its database locked by another
process while a change waits to be written. Once it can be used again, the reason goes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kin_memory.recall import database
from kin_memory.recall.service import Recall, sync_quietly
from kin_memory.store.paths import HIDDEN_DIR


def _memory(root: Path, name: str, body: str) -> None:
    (root / name).write_text(f"---\ncategory: preference\n---\n{body}\n")


def test_a_usable_index_has_no_reason(store: Path) -> None:
    _memory(store, "tabs.md", "the user prefers tabs")
    recall = Recall(store)
    recall.sync_disk()
    assert [h.vpath for h, _ in recall.search("tabs", None)] == ["/memories/tabs.md"]
    assert recall.unavailable() is None


def test_a_linked_hidden_folder_is_the_reason(store: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (store / HIDDEN_DIR).symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    _memory(store, "tabs.md", "the user prefers tabs")
    recall = Recall(store)
    sync_quietly(recall)
    assert recall.search("tabs", None) == []
    assert recall.unavailable() == f"{HIDDEN_DIR} is a symbolic link"


def test_a_locked_database_is_the_reason_until_a_whole_sync_succeeds(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "BUSY_TIMEOUT", 0.1)
    _memory(store, "tabs.md", "the user prefers tabs")
    Recall(store).sync_disk()
    holder = sqlite3.connect(store / HIDDEN_DIR / "recall.sqlite3", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        _memory(store, "spaces.md", "the user prefers spaces")
        recall = Recall(store)
        sync_quietly(recall)  # the new memory cannot be written: no traceback, a reason
        assert recall.search("spaces", None) == []
        assert recall.unavailable() == "database is locked"
    finally:
        holder.execute("COMMIT")
        holder.close()
    sync_quietly(recall)
    assert [h.vpath for h, _ in recall.search("spaces", None)] == ["/memories/spaces.md"]
    assert recall.unavailable() is None
