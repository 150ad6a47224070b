"""An agent's process keeps its own versions (label "agent"), and the language server's watcher may see
the same file first: as "external", or as "edit" when the editor had the file open and reloaded it. The
writer's record a moment later takes the version back under its own label; an older capture is not
relabelled (someone else wrote that content)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kin_memory.history import versions
from kin_memory.history.query import history_of
from kin_memory.history.sync import catch_up
from kin_memory.history.versions import capture, kept


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "memory"
    (r / "facts").mkdir(parents=True)
    (r / "facts" / "db.md").write_text("---\ncategory: project-fact\n---\nport 5432\n")
    catch_up(r)
    return r


@pytest.mark.parametrize("watcher", ["external", "edit"])
def test_a_capture_by_the_watcher_during_the_agents_write_takes_the_agents_label(root, watcher):
    with kept(root, ["/memories/facts/db.md"], "agent"):
        (root / "facts" / "db.md").write_text("---\ncategory: project-fact\n---\nport 5433\n")
        capture(root, ["/memories/facts/db.md"], watcher)  # the server's watcher was quicker
    assert [v.source for v in history_of(root, "/memories/facts/db.md")] == ["agent", "external"]


def test_a_capture_older_than_the_relabel_window_keeps_its_label(root, monkeypatch):
    with kept(root, ["/memories/facts/db.md"], "agent"):
        (root / "facts" / "db.md").write_text("---\ncategory: project-fact\n---\nport 5433\n")
        capture(root, ["/memories/facts/db.md"], "edit")
        monkeypatch.setattr(versions, "RELABEL_SECONDS", -1.0)
    assert [v.source for v in history_of(root, "/memories/facts/db.md")] == ["edit", "external"]
