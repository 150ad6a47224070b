"""Issue 14, point 13 (recall side): with `.kin-index` planted as a link, the recall index refuses: no
database is written (and nothing is wiped) where the link points, one line is logged, searches answer
nothing and the caller keeps going. Once the folder is real again the index comes back."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from kin_memory.recall.service import Recall
from kin_memory.store.paths import HIDDEN_DIR


def _memory(root: Path, name: str, body: str) -> None:
    (root / name).write_text(f"---\ncategory: preference\n---\n{body}\n")


def test_linked_hidden_folder_gets_no_database_and_recall_answers_nothing(
    store: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "recall.sqlite3").write_text("someone else's file\n")  # a rebuild used to wipe this
    (store / HIDDEN_DIR).symlink_to(elsewhere, target_is_directory=True)
    _memory(store, "tabs.md", "the user prefers tabs over spaces")
    recall = Recall(store)
    with caplog.at_level(logging.WARNING, logger="kin_memory.recall"):
        stats = recall.sync_disk()
        assert recall.search("tabs", None) == []
        assert recall.search("spaces", None) == []
        recall.reindex()
        assert recall.index.count() == 0
    assert stats.read == 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["recall.sqlite3"]
    assert (elsewhere / "recall.sqlite3").read_text() == "someone else's file\n"
    logged = [r.getMessage() for r in caplog.records]
    assert logged == [
        f"recall index off: {HIDDEN_DIR} is a symbolic link; search and recall answer nothing until it is fixed"
    ]


def test_linked_database_file_is_refused(store: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.sqlite3"
    (store / HIDDEN_DIR).mkdir()
    (store / HIDDEN_DIR / "recall.sqlite3").symlink_to(victim)
    _memory(store, "a.md", "alpha words")
    recall = Recall(store)
    recall.sync_disk()
    assert recall.search("alpha", None) == []
    assert not victim.exists()


def test_index_comes_back_once_the_folder_is_real(store: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (store / HIDDEN_DIR).symlink_to(elsewhere, target_is_directory=True)
    _memory(store, "a.md", "alpha words")
    recall = Recall(store)
    refills: list[int] = []
    recall.index.on_reset = lambda: refills.append(1)
    recall.sync_disk()
    assert recall.search("alpha", None) == [] and recall.index.refused
    (store / HIDDEN_DIR).unlink()
    recall.sync_disk()
    assert [h.vpath for h, _ in recall.search("alpha", None)] == ["/memories/a.md"]
    assert recall.index.refused is None and refills == [1]  # the owner is told to refill
    assert (store / HIDDEN_DIR).is_dir() and not (store / HIDDEN_DIR).is_symlink()
