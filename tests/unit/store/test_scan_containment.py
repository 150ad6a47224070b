"""Issue 14, point 8 (store side): the cold scan and the refresh of one changed file apply one
containment rule (store.store.scan_refuses): a file under a symlinked folder, a link to a file outside
the store, a hidden or too-deep path is never read by either."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kin_memory.store.store import MAX_DEPTH, Store, scan, scan_refuses

MEMORY = "---\ncategory: preference\n---\n{}\n"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "store"
    outside = tmp_path / "outside"
    (root / "notes").mkdir(parents=True)
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.md").write_text(MEMORY.format("outside secret"))
    (outside / "sub" / "deeper.md").write_text(MEMORY.format("outside deeper"))
    (root / "notes" / "kept.md").write_text(MEMORY.format("inside"))
    (root / "linked").symlink_to(outside, target_is_directory=True)  # a folder link out of the store
    (root / "alias").symlink_to(root / "notes", target_is_directory=True)  # a folder link inside it
    (root / "leak.md").symlink_to(outside / "secret.md")  # a file link out of the store
    (root / "inner.md").symlink_to(root / "notes" / "kept.md")  # a file link inside it: read
    (root / "dangling.md").symlink_to(root / "nowhere.md")  # dangling: listed, the read reports it
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.md").write_text("x")
    deep = root.joinpath(*[f"d{i}" for i in range(MAX_DEPTH + 1)])
    deep.mkdir(parents=True)
    (deep / "too-deep.md").write_text("x")
    (deep.parent / "deepest-ok.md").write_text("x")
    return root, outside


def _candidates(root: Path) -> list[Path]:
    """Every *.md path below root, links followed (what a watcher that follows links may report)."""
    found = []
    for dirpath, _, files in os.walk(root, followlinks=True):
        found += [Path(dirpath) / f for f in files if f.endswith(".md")]
    return found


def test_scan_and_scan_refuses_agree_on_every_file(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    listed = {str(path) for path, _, _ in scan(root)[0]}
    for path in _candidates(root):
        assert (scan_refuses(root, path) is None) == (str(path) in listed), path
    assert {Path(p).name for p in listed} == {"kept.md", "inner.md", "dangling.md", "deepest-ok.md"}


def test_refresh_never_reads_what_the_scan_refuses(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    store = Store(root)
    store.load_all()
    before = {m.vpath for m in store.all()}
    for path in (root / "linked" / "secret.md", root / "linked" / "sub" / "deeper.md", root / "leak.md",
                 root / "alias" / "kept.md"):  # fmt: skip
        vpath, memory = store.refresh_path(path)
        assert memory is None, vpath
    assert {m.vpath for m in store.all()} == before
    assert not any("outside" in m.text for m in store.all())


def test_a_folder_turned_into_a_link_drops_its_memories_on_refresh(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text(MEMORY.format("inside"))
    store = Store(root)
    store.load_all()
    assert store.get("/memories/notes/a.md") is not None
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.md").write_text(MEMORY.format("outside text"))
    (root / "notes" / "a.md").unlink()
    (root / "notes").rmdir()
    (root / "notes").symlink_to(outside, target_is_directory=True)
    assert store.refresh_path(root / "notes" / "a.md") == ("/memories/notes/a.md", None)
    assert store.get("/memories/notes/a.md") is None


def test_a_dangling_link_whose_target_appears_outside_is_not_read_through(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "late.md").symlink_to(outside / "late.md")  # dangling: the scan lists it, unreadable
    store = Store(root)
    store.load_all(compact=True)  # the server's mode: closed files are read again on demand
    assert [m.vpath for m in store.disk_memories()] == ["/memories/late.md"]
    (outside / "late.md").write_text(MEMORY.format("outside text"))  # no watcher looks out there
    again = store.get("/memories/late.md")
    assert again is not None and "outside text" not in again.text
    assert again.read_error == "symlink pointing outside the store: not read"
