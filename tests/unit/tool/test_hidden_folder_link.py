"""Issue 14, point 13 (tool side): a hidden folder planted as a link (`.kin-index -> /elsewhere`) or a
link planted inside it never makes the tool write its audit line or its lock file outside the store;
the tool call itself still works (the audit never breaks an operation)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.store.paths import HIDDEN_DIR
from kin_memory.tool.commands import ToolContext, run_tool

CALLS = [
    {"command": "create", "path": "/memories/a.md", "file_text": "---\ncategory: preference\n---\nx\n"},
    {"command": "view", "path": "/memories/a.md"},
    {"command": "str_replace", "path": "/memories/a.md", "old_str": "x", "new_str": "y"},
    {"command": "insert", "path": "/memories/a.md", "insert_line": 3, "insert_text": "z"},
    {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"},
    {"command": "delete", "path": "/memories/b.md"},
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    root.mkdir()
    return root


def _run_all(root: Path) -> None:
    for call in CALLS:
        res = run_tool(call, ToolContext(root=root))
        assert not res.is_error, (call, res.content)


def test_hidden_folder_linked_outside_gets_no_audit_line_and_no_lock(
    store: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (store / HIDDEN_DIR).symlink_to(elsewhere, target_is_directory=True)
    with caplog.at_level(logging.WARNING, logger="kin_memory.tool"):
        _run_all(store)
    assert list(elsewhere.iterdir()) == []  # no audit.jsonl, no tool.lock
    assert (store / HIDDEN_DIR).is_symlink()  # left as it was: the user decides what to do with it
    refusals = [r.getMessage() for r in caplog.records if "audit log not written" in r.getMessage()]
    assert refusals == [f"audit log not written: {HIDDEN_DIR} is a symbolic link"]  # once, not per call


def test_audit_file_linked_outside_is_not_followed(store: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    (store / HIDDEN_DIR).mkdir()
    (store / HIDDEN_DIR / "audit.jsonl").symlink_to(victim)
    (store / HIDDEN_DIR / "tool.lock").symlink_to(tmp_path / "planted.lock")
    _run_all(store)
    assert victim.read_text() == "untouched\n"
    assert not (tmp_path / "planted.lock").exists()


def test_audit_fifo_never_blocks(store: Path) -> None:
    (store / HIDDEN_DIR).mkdir()
    os.mkfifo(store / HIDDEN_DIR / "audit.jsonl")
    os.mkfifo(store / HIDDEN_DIR / "tool.lock")
    # in a child with a timeout: opening either FIFO the plain way waits for a reader forever
    script = (
        "import sys; from pathlib import Path; from kin_memory.tool.commands import ToolContext, run_tool\n"
        f"calls = {CALLS!r}\n"
        "for call in calls:\n"
        "    res = run_tool(call, ToolContext(root=Path(sys.argv[1])))\n"
        "    assert not res.is_error, (call, res.content)\n"
    )
    try:
        out = subprocess.run(
            [sys.executable, "-c", script, str(store)], capture_output=True, text=True, timeout=10
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a tool call blocked on a FIFO planted in the hidden folder")
    assert out.returncode == 0, out.stderr[-2000:]


def test_real_hidden_folder_still_gets_the_audit(store: Path) -> None:
    _run_all(store)
    lines = (store / HIDDEN_DIR / "audit.jsonl").read_text().splitlines()
    assert [json.loads(line)["command"] for line in lines] == [c["command"] for c in CALLS]
