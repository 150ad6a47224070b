"""A start-up worker's scratch file for the entries it keeps until after its answer (shards/spill.py):
what it keeps comes back in order, and a linked hidden folder gets no scratch file (nothing is written
through it); the entries are then written as they come."""

from __future__ import annotations

from pathlib import Path

from kin_memory.lsp.startup.shards import spill
from kin_memory.store.paths import HIDDEN_DIR


def test_what_is_kept_comes_back_in_order(tmp_path: Path) -> None:
    folder = tmp_path / "memory" / HIDDEN_DIR
    folder.mkdir(parents=True)
    kept = spill._Spill(folder)
    items = [("entry", n) for n in range(spill.HELD * 2 + 5)]
    assert all(kept.add(item) for item in items)
    assert list(kept.taken()) == items
    assert list(folder.iterdir()) == []  # the scratch file has no name


def test_a_linked_hidden_folder_gets_no_scratch_file(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / HIDDEN_DIR).symlink_to(elsewhere)
    kept = spill._Spill(tmp_path / "memory" / HIDDEN_DIR)
    results = [kept.add(("entry", n)) for n in range(spill.HELD + 1)]
    assert results[: spill.HELD - 1] == [True] * (spill.HELD - 1) and results[-1] is False
    assert list(elsewhere.iterdir()) == []
    assert len(list(kept.taken())) == spill.HELD - 1  # what it kept in memory, the rest written as it comes
