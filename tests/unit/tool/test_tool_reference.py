"""Every result and error string of the reference table, literally, per command, on a real temp store.

The expected texts are written out here (not taken from `messages`), so a drift in either shows.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kin_memory.tool.commands import ToolContext, run, run_tool, writing


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    (root / "dir").mkdir(parents=True)
    (root / "f.md").write_text("Line 1\nOld Text\nLine 3")
    (root / "two.md").write_text("a x\nb\nc x\n")
    (root / "bin.md").write_bytes(b"ok \xff\xfe no")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "s.md").write_text("secret")
    (root / "esc").symlink_to(tmp_path / "outside")
    os.mkfifo(root / "pipe")
    return root


def call(root: Path, **inp) -> tuple[str, bool]:
    res = run_tool(inp, ToolContext(root=root))
    return res.content, res.is_error


CASES = [
    # (input, expected text, is_error)
    (
        {"command": "view", "path": "memories/f.md"},
        "Path must start with /memories, got: memories/f.md",
        True,
    ),
    (
        {"command": "view", "path": "/memories-x/f.md"},
        "Path must start with /memories, got: /memories-x/f.md",
        True,
    ),
    (
        {"command": "view", "path": "/memories/../f.md"},
        "Path /memories/../f.md would escape /memories directory",
        True,
    ),
    (
        {"command": "view", "path": "/memories/%2e%2e/f.md"},
        "Path /memories/%2e%2e/f.md would escape /memories directory",
        True,
    ),
    (
        {"command": "view", "path": "/memories/esc/s.md"},
        "Path would escape /memories directory via symlink",
        True,
    ),
    (
        {"command": "view", "path": "/memories/no.md"},
        "The path /memories/no.md does not exist. Please provide a valid path.",
        True,
    ),
    (
        {"command": "view", "path": "/memories/bin.md"},
        "The file /memories/bin.md is not a valid UTF-8 text file and cannot be read as memory.",
        True,
    ),
    ({"command": "view", "path": "/memories/pipe"}, "Unsupported file type for /memories/pipe", True),
    (
        {"command": "view", "path": "/memories/f.md"},
        "Here's the content of /memories/f.md with line numbers:\n     1\tLine 1\n     2\tOld Text\n     3\tLine 3",
        False,
    ),
    (
        {"command": "view", "path": "/memories/f.md", "view_range": [2, -1]},
        "Here's the content of /memories/f.md with line numbers:\n     2\tOld Text\n     3\tLine 3",
        False,
    ),
    (
        {"command": "view", "path": "/memories/dir"},
        "Here're the files and directories up to 2 levels deep in /memories/dir, excluding hidden items:\n0B\t/memories/dir",
        False,
    ),
    (
        {"command": "create", "path": "/memories/new.txt", "file_text": "x"},
        "File created successfully at: /memories/new.txt",
        False,
    ),
    (
        {"command": "create", "path": "/memories/f.md", "file_text": "x"},
        "File /memories/f.md already exists",
        True,
    ),
    (
        {"command": "create", "path": "/memories/esc/n.md", "file_text": "x"},
        "Path would escape /memories directory via symlink",
        True,
    ),
    (
        {"command": "str_replace", "path": "/memories/f.md", "old_str": "zz", "new_str": "y"},
        "No replacement was performed, old_str `zz` did not appear verbatim in /memories/f.md.",
        True,
    ),
    (
        {"command": "str_replace", "path": "/memories/two.md", "old_str": "x", "new_str": "y"},
        "No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 3. Please ensure it is unique",
        True,
    ),
    (
        {"command": "str_replace", "path": "/memories/f.md", "old_str": "Old", "new_str": "New"},
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\tLine 1\n     2\tNew Text\n     3\tLine 3",
        False,
    ),
    (
        {"command": "str_replace", "path": "/memories/no.md", "old_str": "a", "new_str": "b"},
        "The path /memories/no.md does not exist. Please provide a valid path.",
        True,
    ),
    (
        {"command": "str_replace", "path": "/memories/dir", "old_str": "a", "new_str": "b"},
        "The path /memories/dir is not a file.",
        True,
    ),
    (
        {"command": "insert", "path": "/memories/f.md", "insert_line": 9, "insert_text": "x"},
        "Invalid `insert_line` parameter: 9. It should be within the range [0, 3].",
        True,
    ),
    (
        {"command": "insert", "path": "/memories/f.md", "insert_line": -1, "insert_text": "x"},
        "Invalid `insert_line` parameter: -1. It should be within the range [0, 3].",
        True,
    ),
    (
        {"command": "insert", "path": "/memories/f.md", "insert_line": 1, "insert_text": "x"},
        "The file /memories/f.md has been edited.",
        False,
    ),
    (
        {"command": "insert", "path": "/memories/no.md", "insert_line": 0, "insert_text": "x"},
        "The path /memories/no.md does not exist. Please provide a valid path.",
        True,
    ),
    (
        {"command": "insert", "path": "/memories/dir", "insert_line": 0, "insert_text": "x"},
        "The path /memories/dir is not a file.",
        True,
    ),
    ({"command": "delete", "path": "/memories"}, "Cannot delete the /memories directory itself", True),
    ({"command": "delete", "path": "/memories/no.md"}, "The path /memories/no.md does not exist", True),
    ({"command": "delete", "path": "/memories/f.md"}, "Successfully deleted /memories/f.md", False),
    (
        {"command": "delete", "path": "/memories/esc/s.md"},
        "Path would escape /memories directory via symlink",
        True,
    ),
    (
        {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
        "Cannot rename the /memories directory itself",
        True,
    ),
    (
        {"command": "rename", "old_path": "/memories/f.md", "new_path": "/memories/two.md"},
        "The destination /memories/two.md already exists",
        True,
    ),
    (
        {"command": "rename", "old_path": "/memories/no.md", "new_path": "/memories/x.md"},
        "The path /memories/no.md does not exist",
        True,
    ),
    (
        {"command": "rename", "old_path": "/memories/f.md", "new_path": "/memories/a/b.md"},
        "Successfully renamed /memories/f.md to /memories/a/b.md",
        False,
    ),
    (
        {"command": "rename", "old_path": "/memories/f.md", "new_path": "/memories/esc/f.md"},
        "Path would escape /memories directory via symlink",
        True,
    ),
]


@pytest.mark.parametrize(
    ("inp", "expected", "is_error"), CASES, ids=lambda v: v.get("command") if isinstance(v, dict) else None
)
def test_reference_strings(store, inp, expected, is_error):
    assert call(store, **inp) == (expected, is_error)


def test_too_many_lines(store):
    (store / "big.md").write_bytes(b"\n" * 999_999)  # 1,000,000 lines once split on \n
    assert call(store, command="view", path="/memories/big.md") == (
        "File /memories/big.md exceeds maximum line limit of 999,999 lines.",
        True,
    )


def test_vanished_between_read_and_write(store, monkeypatch):
    monkeypatch.setattr(writing, "before_commit", lambda path: path.unlink())
    assert call(store, command="insert", path="/memories/f.md", insert_line=0, insert_text="x") == (
        "The file /memories/f.md no longer exists (may have been deleted or renamed concurrently).",
        True,
    )


def test_successes_change_exactly_the_bytes(store):
    call(store, command="str_replace", path="/memories/f.md", old_str="Old", new_str="New")
    assert (store / "f.md").read_bytes() == b"Line 1\nNew Text\nLine 3"
    call(store, command="insert", path="/memories/f.md", insert_line=1, insert_text="ins")
    assert (store / "f.md").read_bytes() == b"Line 1\nins\nNew Text\nLine 3\n"
    call(store, command="rename", old_path="/memories/f.md", new_path="/memories/d/e/g.md")
    assert (store / "d" / "e" / "g.md").read_bytes() == b"Line 1\nins\nNew Text\nLine 3\n"
    assert not (store / "f.md").exists()


def test_public_entry_point_shape(store):
    out = run(
        store, ["/work/a", "/work/b"], {"command": "create", "path": "/memories/m.md", "file_text": "hi\n"}
    )
    assert out == {
        "content": "File created successfully at: /memories/m.md. The store added 4 lines of frontmatter "
        "(`category: episodic` and `workspace: /work/a`) above your text, so your first line is now line 5.",
        "isError": False,
    }
    assert (store / "m.md").read_text() == "---\ncategory: episodic\nworkspace: /work/a\n---\nhi\n"
    assert run(store, None, {"command": "view", "path": "/nope"}) == {
        "content": "Path must start with /memories, got: /nope",
        "isError": True,
    }
    assert (
        run(store, "global", {"command": "delete", "path": "/memories/m.md"}, mode="plan")["isError"] is True
    )
    assert (store / "m.md").exists()
