"""The sync tests' machines: an isolated git (the machine's own configuration is never read), a bare
remote folder and up to three stores, each with its own hidden folder and machine identity."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sync_machines import Machine, make_machine


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "gitconfig").write_text("")  # no name, no email: the sync's fallback identity is used
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    for name in ("GIT_ASKPASS", "SSH_ASKPASS", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "EMAIL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    return bare


@pytest.fixture
def laptop(tmp_path: Path, remote: Path) -> Machine:
    return make_machine(tmp_path, remote, "laptop")


@pytest.fixture
def desktop(tmp_path: Path, remote: Path) -> Machine:
    return make_machine(tmp_path, remote, "desktop")


@pytest.fixture
def devbox(tmp_path: Path, remote: Path) -> Machine:
    return make_machine(tmp_path, remote, "devbox")
