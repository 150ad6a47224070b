"""Issue 14, point 13 (reflection side): staging hard-links every memory into a folder in `.kin-index`;
with `.kin-index` planted as a link that would copy the store to wherever it points. It stages in a
private temporary folder instead."""

from __future__ import annotations

from pathlib import Path

from kin_memory.reflect.staging import Staging
from kin_memory.store.paths import HIDDEN_DIR


def test_staging_never_goes_through_a_linked_hidden_folder(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "a.md").write_text("---\ncategory: preference\n---\nx\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (store / HIDDEN_DIR).symlink_to(elsewhere, target_is_directory=True)
    with Staging(store) as staging:
        assert list(elsewhere.iterdir()) == []
        assert not str(staging.dir).startswith(str(store))
        assert (staging.dir / "a.md").read_text() == "---\ncategory: preference\n---\nx\n"
    assert list(elsewhere.iterdir()) == []


def test_staging_in_a_real_hidden_folder(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "a.md").write_text("x")
    with Staging(store) as staging:
        assert staging.dir.parent == store / HIDDEN_DIR
