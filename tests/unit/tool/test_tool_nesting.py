"""Issue 14, point 7: `create` refuses paths deeper than the scan goes (store.store.MAX_DEPTH folders),
`rename` refuses to move a folder so that something in it lands deeper, and the walks the tool does are
iterative: a tree 1,100 folders deep made outside the tool neither crashes `view /memories` nor `delete`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kin_memory.reflect.staging import Staging
from kin_memory.tool.commands import ToolContext, run_tool

SCAN_DEPTH = 32  # store.store.MAX_DEPTH
TOO_DEEP = (
    "Path {} is nested too deeply: memories may be at most 32 folders below /memories "
    "(deeper files are never scanned, indexed or recalled)"
)


def run(root: Path, **inp: object):
    return run_tool(inp, ToolContext(root=root))


def deep_path(levels: int, name: str = "f.md") -> str:
    return "/memories/" + "/".join(f"d{i}" for i in range(levels)) + "/" + name


def make_deep_tree(root: Path, levels: int) -> None:
    """A chain of folders `d/d/d/...` made with directory descriptors (no path ever gets long)."""
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("leaf.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as f:
            f.write("deep\n")
    finally:
        os.close(fd)


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    r = tmp_path / "store"
    r.mkdir()
    yield r
    # pytest's own clean-up of old temporary folders recurses (shutil.rmtree) and dies on a 1,100-level
    # tree; rm walks iteratively, so no test leaves such a tree behind, whatever its outcome
    subprocess.run(["rm", "-rf", str(r)], check=False)


def test_create_at_the_scan_depth_is_allowed(root: Path) -> None:
    path = deep_path(SCAN_DEPTH)
    res = run(root, command="create", path=path, file_text="x")
    assert not res.is_error, res.content


def test_create_deeper_than_the_scan_depth_is_refused(root: Path) -> None:
    path = deep_path(SCAN_DEPTH + 1)
    res = run(root, command="create", path=path, file_text="x")
    assert res.is_error and res.content == TOO_DEEP.format(path)
    assert not (root / "d0").exists()  # refused before any folder was made


def test_create_of_1100_levels_is_refused(root: Path) -> None:
    path = deep_path(1100)
    res = run(root, command="create", path=path, file_text="x")
    assert res.is_error and res.content == TOO_DEEP.format(path)


def test_rename_cannot_stack_folders_past_the_scan_depth(root: Path) -> None:
    for top in ("a", "b"):
        chain = "/".join(f"{top}{i}" for i in range(20))
        assert not run(root, command="create", path=f"/memories/{chain}/f.md", file_text="x").is_error
    into = "/memories/" + "/".join(f"b{i}" for i in range(20)) + "/a0"
    res = run(root, command="rename", old_path="/memories/a0", new_path=into)
    assert res.is_error and res.content == TOO_DEEP.format(into)
    assert (root / "a0").is_dir()
    shallow = "/memories/" + "/".join(f"b{i}" for i in range(5)) + "/a0"
    assert not run(root, command="rename", old_path="/memories/a0", new_path=shallow).is_error


def test_rename_of_a_file_deeper_than_the_scan_depth_is_refused(root: Path) -> None:
    assert not run(root, command="create", path="/memories/f.md", file_text="x").is_error
    res = run(root, command="rename", old_path="/memories/f.md", new_path=deep_path(SCAN_DEPTH + 1))
    assert res.is_error and "nested too deeply" in res.content and (root / "f.md").is_file()


def test_delete_of_a_1100_level_tree_made_outside_the_tool(root: Path) -> None:
    make_deep_tree(root, 1100)
    (root / "keep.md").write_text("x")
    res = run(root, command="delete", path="/memories/d")
    assert not res.is_error, res.content
    assert res.content == "Successfully deleted /memories/d"
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["keep.md"]


def test_delete_of_a_deep_tree_holds_few_descriptors(root: Path) -> None:
    import resource

    make_deep_tree(root, 1100)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))  # fewer than the tree's depth
    try:
        res = run(root, command="delete", path="/memories/d")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert not res.is_error, res.content
    assert not (root / "d").exists()


def test_view_root_over_a_1100_level_tree_made_outside_the_tool(root: Path) -> None:
    make_deep_tree(root, 1100)
    res = run(root, command="view", path="/memories")
    assert not res.is_error, res.content
    assert "/memories/d/" in res.content


def test_tree_size_walks_1100_levels_without_recursion(root: Path) -> None:
    from kin_memory.tool.tree import tree_size

    make_deep_tree(root, 1100)  # the leaf's path is about 2,200 bytes: still under PATH_MAX, so counted
    (root / "top.md").write_bytes(b"12345")
    assert tree_size(str(root)) == (5 + len("deep\n"), False)


def test_reflection_staging_of_a_1100_level_tree(root: Path) -> None:
    make_deep_tree(root, 1100)
    (root / "top.md").write_text("---\ncategory: preference\n---\nx\n")
    with Staging(root) as staging:  # used to die in a recursive walk
        assert "top.md" in staging.base
        assert not any(rel.endswith("leaf.md") for rel in staging.base)  # past the scan's depth
        assert staging.diff() == []
