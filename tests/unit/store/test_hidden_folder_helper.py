"""The hidden-folder helpers of store/paths.py: the one way into `.kin-index` for the recall index, the
audit log, the tool's lock and reflection staging."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kin_memory.store.paths import (
    HIDDEN_DIR,
    HiddenRefused,
    hidden_file_problem,
    open_hidden_dir,
    open_hidden_file,
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    root.mkdir()
    return root


def test_open_hidden_dir_refuses_a_link_and_a_file(store: Path, tmp_path: Path) -> None:
    (store / HIDDEN_DIR).symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(HiddenRefused, match="is a symbolic link"):
        open_hidden_dir(store, create=True)
    (store / HIDDEN_DIR).unlink()
    (store / HIDDEN_DIR).write_text("a file")
    with pytest.raises(HiddenRefused, match="is not a folder"):
        open_hidden_dir(store, create=True)


def test_open_hidden_dir_makes_a_private_folder_but_never_the_root(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_hidden_dir(tmp_path / "gone", create=True)
    assert not (tmp_path / "gone").exists()
    old = os.umask(0)
    try:
        fd = open_hidden_dir(tmp_path, create=True)
    finally:
        os.umask(old)
    try:
        os.symlink("/etc/passwd", "planted", dir_fd=fd)
        with pytest.raises(HiddenRefused, match="planted is a symbolic link"):
            open_hidden_file(fd, "planted", os.O_RDONLY)
    finally:
        os.close(fd)
    assert (tmp_path / HIDDEN_DIR).stat().st_mode & 0o777 == 0o700


def test_open_hidden_file_refuses_a_fifo_without_blocking(store: Path) -> None:
    fd = open_hidden_dir(store, create=True)
    try:
        os.mkfifo("pipe", dir_fd=fd)
        with pytest.raises(HiddenRefused, match="is not a regular file"):
            open_hidden_file(fd, "pipe", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with pytest.raises(HiddenRefused, match="is not a regular file"):
            open_hidden_file(fd, "pipe", os.O_RDWR | os.O_CREAT)
    finally:
        os.close(fd)


def test_hidden_file_problem_names_the_link(store: Path, tmp_path: Path) -> None:
    assert hidden_file_problem(store, "recall.sqlite3") is None  # nothing there yet
    (store / HIDDEN_DIR).mkdir()
    (store / HIDDEN_DIR / "recall.sqlite3-wal").symlink_to(tmp_path / "x")
    assert hidden_file_problem(store, "recall.sqlite3") is None
    assert (
        hidden_file_problem(store, "recall.sqlite3-wal")
        == f"{HIDDEN_DIR}/recall.sqlite3-wal is a symbolic link"
    )
