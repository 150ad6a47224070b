"""Reflection stages tool calls on a hard-linked copy of the store: no tool write may reach the original
through a shared inode (every write is a new file renamed into place)."""

from __future__ import annotations

import os
from pathlib import Path

from kin_memory.tool.commands import run


def test_writes_on_a_hard_linked_copy_leave_the_original_alone(tmp_path: Path):
    original = tmp_path / "store"
    (original / "facts").mkdir(parents=True)
    (original / "facts" / "a.md").write_bytes(b"---\ncategory: project-fact\n---\nalpha\r\nbeta\n")
    (original / "facts" / "b.md").write_bytes(b"one\ntwo\n")
    (original / "c.md").write_bytes(b"gamma\n")
    staging = tmp_path / "staging"
    for dirpath, _dirs, files in os.walk(original):
        rel = Path(dirpath).relative_to(original)
        (staging / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            os.link(Path(dirpath) / name, staging / rel / name)
    before = {p: p.read_bytes() for p in original.rglob("*") if p.is_file()}
    calls = [
        {"command": "str_replace", "path": "/memories/facts/a.md", "old_str": "alpha", "new_str": "ALPHA"},
        {"command": "insert", "path": "/memories/facts/b.md", "insert_line": 1, "insert_text": "inserted"},
        {"command": "rename", "old_path": "/memories/c.md", "new_path": "/memories/moved/c.md"},
        {"command": "create", "path": "/memories/new.md", "file_text": "new\n"},
        {"command": "str_replace", "path": "/memories/moved/c.md", "old_str": "gamma", "new_str": "GAMMA"},
        {"command": "delete", "path": "/memories/facts/b.md"},
    ]
    for inp in calls:
        assert run(staging, "/work/repo", inp)["isError"] is False, inp
    assert {p: p.read_bytes() for p in original.rglob("*") if p.is_file()} == before
    assert (staging / "facts" / "a.md").read_bytes() == b"---\ncategory: project-fact\n---\nALPHA\r\nbeta\n"
    assert (staging / "moved" / "c.md").read_bytes() == b"GAMMA\n"
    assert os.stat(original / "facts" / "a.md").st_nlink == 1  # the copy got a new inode
