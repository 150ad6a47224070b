"""Real git repositories for tests: a bare origin folder, clones of it at different paths, and a store
per machine. The machine's own git configuration is never read (HOME is a temporary folder)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

AUTHOR = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def isolate_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "gitconfig").write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env={**os.environ, **AUTHOR}
    )
    return done.stdout.strip()


def make_origin(tmp_path: Path, name: str = "api") -> Path:
    """A bare repository with one commit, as a hosting service would hold it."""
    bare = tmp_path / "remotes" / f"{name}.git"
    bare.mkdir(parents=True)
    git(bare, "init", "--bare", "-q", "-b", "main")
    seed = tmp_path / "seed" / name
    seed.mkdir(parents=True)
    git(seed, "init", "-q", "-b", "main")
    (seed / "README.md").write_text(f"# {name}\n")
    git(seed, "add", "README.md")
    git(seed, "commit", "-q", "-m", "first")
    git(seed, "remote", "add", "origin", str(bare))
    git(seed, "push", "-q", "origin", "main")
    shutil.rmtree(seed)
    return bare


def clone(origin: Path, where: Path) -> str:
    """A clone of `origin` at `where`; its realpath (the workspace stamp of that clone)."""
    where.parent.mkdir(parents=True, exist_ok=True)
    git(where.parent, "clone", "-q", str(origin), where.name)
    return os.path.realpath(where)


@dataclass
class TwoMachines:
    """One repository cloned on a "laptop" and on a "desktop" (two stores on one machine), and an
    unrelated repository on the desktop."""

    laptop_store: Path
    desktop_store: Path
    laptop_clone: str
    desktop_clone: str
    unrelated: str
    origin: Path


def two_machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TwoMachines:
    """Each machine records its clone in its own store; the desktop's store receives the laptop's machine
    file (what a sync brings); the laptop's clone is then removed (it is not on the desktop)."""
    from kin_memory.store.machine import rename_machine
    from kin_memory.store.workspace_aliases import machines_dir, record_workspaces

    isolate_git(tmp_path, monkeypatch)
    origin = make_origin(tmp_path)
    laptop_store, desktop_store = tmp_path / "laptop-store", tmp_path / "desktop-store"
    laptop_store.mkdir()
    desktop_store.mkdir()
    rename_machine(laptop_store, "laptop")
    rename_machine(desktop_store, "desktop")
    laptop_clone = clone(origin, tmp_path / "laptop" / "src" / "api")
    assert record_workspaces(laptop_store, [laptop_clone])
    machines_dir(desktop_store).mkdir(parents=True)
    for f in machines_dir(laptop_store).iterdir():
        shutil.copy(f, machines_dir(desktop_store) / f.name)
    shutil.rmtree(tmp_path / "laptop")
    desktop_clone = clone(origin, tmp_path / "desktop" / "code" / "api")
    assert record_workspaces(desktop_store, [desktop_clone])
    unrelated = clone(make_origin(tmp_path, "other"), tmp_path / "desktop" / "code" / "other")
    return TwoMachines(laptop_store, desktop_store, laptop_clone, desktop_clone, unrelated, origin)
