"""The store's listing kept between starts: taken only while every folder is as the scan saw it."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

import kin_memory.caches.listing as kept_listing
from kin_memory.caches.findings import FindingsCache
from kin_memory.caches.listing import confirm_and_keep, keep, kept, settled
from kin_memory.caches.segments import segment_of
from kin_memory.store.scan import ScanTree, scan_names


def write(root: Path, rel: str, text: str = "---\ncategory: episodic\n---\nx\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path, monkeypatch) -> Path:
    # Folders made a moment ago are trusted here (the product waits a racy window; see its own tests).
    monkeypatch.setattr(kept_listing, "RACY_FINE", 0.0)
    monkeypatch.setattr(kept_listing, "RACY_COARSE", 0.0)
    root = tmp_path / "memory"
    for i in range(30):
        write(root, f"notes/deep/er/n{i}.md")
        write(root, f"facts/f{i}.md")
    write(root, "ünï/café.md")
    write(root, "MEMORY.md", "# Index\n")
    (root / "too").mkdir()
    opened = FindingsCache.open(root)  # its hidden folder made before any scan, as at a warm start
    assert opened is not None
    opened.close()
    return root


def walked(root: Path, shard: tuple[int, int] = (0, 1)) -> list[tuple[str, str, int]]:
    index, count = shard
    files = [(p, v, segment_of(v)) for p, v, is_index in scan_names(root)[0] if not is_index]
    return sorted(f for f in files if f[2] % count == index)


def kept_now(root: Path, shard: tuple[int, int] = (0, 1)):
    cache = FindingsCache.open(root)
    assert cache is not None
    try:
        return kept(cache.conn, str(root), shard)
    finally:
        cache.close()


def keep_scan(root: Path) -> ScanTree:
    time.sleep(0.02)  # the folders' last change strictly before the scan
    tree = ScanTree()
    files, problems = scan_names(root, tree)
    segments: dict[int, list[str]] = {}
    for _, vpath, is_index in files:
        if not is_index:
            segments.setdefault(segment_of(vpath), []).append(vpath)
    index = next((v for _, v, is_index in files if is_index), None)
    cache = FindingsCache.open(root)
    assert cache is not None
    keep(cache.conn, str(root), tree, segments, index, problems)
    cache.close()
    return tree


def test_an_unchanged_store_is_listed_as_its_scan_listed_it(store: Path) -> None:
    assert kept_now(store) is None  # nothing kept yet
    keep_scan(store)
    for shard in ((0, 1), (0, 2), (1, 2)):
        listing = kept_now(store, shard)
        assert listing is not None
        files, index, problems = listing
        assert sorted(files) == walked(store, shard)
        assert index == "/memories/MEMORY.md" and problems == []
    assert any(v.endswith("café.md") for _, v, _ in kept_now(store)[0])


def as_walked(root: Path, shard: tuple[int, int]) -> tuple[list, str | None, list]:
    files, problems = scan_names(root)
    index = next((v for _, v, is_index in files if is_index), None)
    return walked(root, shard), index, sorted((p.vpath, p.reason) for p in problems)


CHANGES = ["add", "remove", "rename", "new folder", "folder mode", "index", "folder removed", "folder renamed",
           "folder replaced", "new nested folders", "folder named like a memory", "root file added"]  # fmt: skip


def change_store(store: Path, change: str) -> None:
    deep = store / "notes" / "deep" / "er"
    if change == "add":
        write(store, "notes/deep/er/new.md")
    elif change == "remove":
        (deep / "n3.md").unlink()
    elif change == "rename":
        (deep / "n3.md").rename(deep / "n3-renamed.md")
    elif change == "new folder":
        (store / "too" / "sub").mkdir()
    elif change == "folder mode":
        os.chmod(deep, 0o500)
    elif change == "index":
        (store / "MEMORY.md").unlink()
    elif change == "folder removed":
        shutil.rmtree(store / "notes" / "deep")
    elif change == "folder renamed":
        (store / "notes" / "deep").rename(store / "notes" / "deeper")
    elif change == "folder replaced":
        shutil.rmtree(deep)
        write(store, "notes/deep/er/other.md")
        write(store, "notes/deep/er/more/inner.md")
    elif change == "new nested folders":
        write(store, "too/a/b/c/n.md")
        write(store, "too/a/m.md")
    elif change == "folder named like a memory":
        (store / "facts" / "odd.md").mkdir()
        write(store, "facts/odd.md/inside.md")
    elif change == "root file added":
        write(store, "top.md")


@pytest.mark.parametrize("change", CHANGES)
def test_folders_changed_since_are_listed_again_as_a_walk_lists_them(store: Path, change: str) -> None:
    keep_scan(store)
    try:
        change_store(store, change)
        for shard in ((0, 1), (0, 2), (1, 2)):
            listing = kept_now(store, shard)
            assert listing is not None
            files, index, problems = listing
            assert (sorted(files), index, sorted((p.vpath, p.reason) for p in problems)) == as_walked(
                store, shard
            )
    finally:
        os.chmod(store / "notes", 0o700)
        if (store / "notes" / "deep" / "er").exists():
            os.chmod(store / "notes" / "deep" / "er", 0o700)


def test_a_symlinked_memory_in_a_changed_folder_means_the_store_is_walked(store: Path) -> None:
    keep_scan(store)
    os.symlink(store / "facts" / "f1.md", store / "notes" / "deep" / "er" / "link.md")
    assert kept_now(store) is None


def test_too_many_changed_folders_mean_the_store_is_walked(store: Path, monkeypatch) -> None:
    monkeypatch.setattr(kept_listing, "RELIST_MIN", 2)
    keep_scan(store)
    write(store, "notes/deep/er/new.md")
    write(store, "facts/new.md")
    assert kept_now(store) is not None  # two folders: listed again
    write(store, "too/new.md")
    assert kept_now(store) is None


def test_a_file_changed_in_place_keeps_the_listing(store: Path) -> None:
    """Content is not the listing's business: the start stats every file it checks."""
    keep_scan(store)
    write(store, "facts/f1.md", "---\ncategory: nonsense\n---\nchanged\n")
    listing = kept_now(store)
    assert listing is not None and sorted(listing[0]) == walked(store)


def test_folders_changed_just_before_the_scan_are_not_trusted(store: Path, monkeypatch) -> None:
    monkeypatch.setattr(kept_listing, "RACY_FINE", 2.0)
    monkeypatch.setattr(kept_listing, "RELIST_MIN", 0)  # none may be listed again: the store is walked
    keep_scan(store)  # every folder was made within the last two seconds
    assert kept_now(store) is None


def test_a_store_with_a_symlinked_memory_is_always_walked(store: Path) -> None:
    keep_scan(store)
    assert kept_now(store) is not None
    os.symlink(store / "facts" / "f1.md", store / "facts" / "link.md")
    tree = keep_scan(store)
    assert tree.unsure == 1
    assert kept_now(store) is None


@pytest.mark.parametrize(
    "text",
    ['["/../../etc/passwd"]', '["/.kin-index/x.md"]', '["no-slash.md"]', "[1, 2]", '{"a": 1}', "not json",
     '["/a\\"/b.md"]'],
)  # fmt: skip
def test_a_listing_that_no_scan_could_have_made_is_not_used(store: Path, text: str) -> None:
    keep_scan(store)
    conn = sqlite3.connect(store / ".kin-index" / "findings.sqlite3")
    conn.execute("UPDATE listing SET files = ? WHERE seg = (SELECT min(seg) FROM listing)", (text,))
    conn.commit()
    conn.close()
    assert kept_now(store) is None


def racy_walk(root: Path) -> tuple[ScanTree, dict[int, list[str]], str | None, list]:
    tree = ScanTree()
    files, problems = scan_names(root, tree)
    segments: dict[int, list[str]] = {}
    for _, vpath, is_index in files:
        if not is_index:
            segments.setdefault(segment_of(vpath), []).append(vpath)
    return tree, segments, next((v for _, v, is_index in files if is_index), None), problems


@pytest.mark.parametrize("meanwhile", ["nothing", "a file added", "a folder added"])
def test_a_walk_that_met_folders_just_changed_is_kept_once_they_settle_as_walked(
    store: Path, monkeypatch, meanwhile: str
) -> None:
    monkeypatch.setattr(kept_listing, "RACY_FINE", 0.5)
    write(store, "notes/deep/er/late.md")  # this folder changed a moment before the walk
    tree, segments, index, problems = racy_walk(store)
    assert not settled(tree)
    if meanwhile == "a file added":
        write(store, "notes/deep/er/later.md")
    elif meanwhile == "a folder added":
        (store / "notes" / "deep" / "er" / "sub").mkdir()
    cache = FindingsCache.open(store)
    assert cache is not None
    confirm_and_keep(cache.conn, str(store), tree, segments, index, problems)
    cache.close()
    listing = kept_now(store)
    if meanwhile == "nothing":
        assert listing is not None and sorted(listing[0]) == walked(store)
    else:
        assert listing is None


def test_the_racy_window_follows_the_filesystem_s_timestamps() -> None:
    second = 1_700_000_000 * kept_listing.NS
    assert kept_listing.racy(second) == kept_listing.RACY_COARSE  # a filesystem stamping whole seconds
    assert kept_listing.racy(second + 123_456_789) == kept_listing.RACY_FINE
    assert kept_listing.trusted(second, second / 1e9 + kept_listing.RACY_COARSE + 0.01)
    assert not kept_listing.trusted(second, second / 1e9 + kept_listing.RACY_COARSE - 0.01)


def test_a_scan_a_moment_after_the_last_write_is_kept_and_a_write_right_after_it_is_seen(
    tmp_path: Path, monkeypatch
) -> None:
    """With the real windows: here the filesystem stamps nanoseconds, so a tenth of a second is enough."""
    root = tmp_path / "memory"
    write(root, "facts/a.md")
    FindingsCache.open(root).close()  # type: ignore[union-attr]  # the hidden folder made first
    time.sleep(kept_listing.RACY_FINE + 0.05)
    keep_scan(root)
    assert kept_now(root) is not None
    write(root, "facts/b.md")  # at once: in the same few milliseconds as the scan
    listing = kept_now(root)
    assert listing is not None and sorted(listing[0]) == walked(root)  # its folder was listed again
