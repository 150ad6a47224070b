"""Helpers for the sync tests: a machine (a store with its own hidden folder and identity) that writes
memories and syncs with a bare remote folder, and a search for conflict markers."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kin_memory.gitsync.engine import sync
from kin_memory.gitsync.report import SyncReport
from kin_memory.store.machine import rename_machine

MARKERS = (b"<<<<<<<", b">>>>>>>")

DEPLOY = """---
category: project-fact
workspace: global
---
# Deploy

The API deploys from `main` through the staging cluster first.
Rollbacks use `make rollback ENV=prod`.
Database migrations run before the new pods start.
Alerts go to the #ops channel.
"""


@dataclass
class Machine:
    root: Path
    name: str
    remote: str

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text()

    def sync(self) -> SyncReport:
        return sync(self.root, remote=self.remote)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def no_marker_anywhere(root: Path) -> list[str]:
    """Files under the store (its own git database aside) holding a conflict marker."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            data = Path(dirpath, name).read_bytes()
            if any(m in data for m in MARKERS):
                found.append(os.path.join(dirpath, name))
    return found


def make_machine(tmp_path: Path, remote: Path, name: str) -> Machine:
    root = tmp_path / name / "memory"
    root.mkdir(parents=True)
    rename_machine(root, name)
    return Machine(root, name, str(remote))
