"""A folder view filters by workspace from the stamps the recall index already holds: a memory the index
saw (same freshness key) is placed without reading it; one changed since, or not indexed, is read; no
index at all reads every file. Either way the listing is the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kin_memory.recall.service import Recall, sync_quietly
from kin_memory.tool import visibility
from kin_memory.tool.commands import ToolContext, run_tool
from support.memfiles import memory, write


def _view(root: Path, ws: str, path: str = "/memories") -> str:
    res = run_tool({"command": "view", "path": path}, ToolContext(root=root, workspace=ws))
    assert not res.is_error, res.content
    return res.content


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str, str]:
    root = tmp_path / "memory"
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    for n in range(30):
        write(root, f"f{n % 3}/a{n}.md", memory("project-fact", f"# A {n}\n\nalpha {n}\n", a))
        write(root, f"f{n % 3}/b{n}.md", memory("project-fact", f"# B {n}\n\nbeta {n}\n", b))
    write(root, "f0/broken.md", f"---\ncategory: project-fact\nworkspace: {a}\ntags: [x\n---\n# Broken\n")
    write(root, "f0/odd.md", "---\ncategory: project-fact\nworkspace: [a, b]\n---\n# Odd\n")
    write(root, "f0/shared.md", memory("preference", "# Shared\n\nterse\n"))
    return root, a, b


def test_indexed_stamps_are_not_read_again_and_give_the_same_listing(store, monkeypatch) -> None:
    root, a, b = store
    cold = _view(root, b)
    recall = Recall(root)
    sync_quietly(recall)
    reads: list[str] = []
    real = visibility.stamp_of
    monkeypatch.setattr(visibility, "stamp_of", lambda p: reads.append(p) or real(p))
    assert _view(root, b) == cold
    assert reads == []  # every memory placed from the index
    assert "a1.md" not in cold and "broken.md" not in cold and "odd.md" not in cold and "shared.md" in cold
    # a memory changed since the index saw it is read: B's memory re-stamped to A disappears
    target = root / "f1" / "b1.md"
    target.write_text(memory("project-fact", "# B 1\n\nnow A's\n", a))
    os.utime(target, (1, 1))  # an old mtime put back: the key (ctime, inode) still moves
    listing = _view(root, b)
    assert "b1.md" not in listing and "b4.md" in listing
    assert reads == [str(target)] or reads == [os.path.realpath(target)]
    del recall


def test_without_an_index_every_file_is_read(store) -> None:
    root, _a, b = store
    assert not (root / ".kin-index" / "recall.sqlite3").exists()
    listing = _view(root, b)
    assert "b0.md" in listing and "a0.md" not in listing
