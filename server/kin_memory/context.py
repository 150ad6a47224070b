"""Build a findings Context and a loaded Store from CLI-style inputs (shared by the CLI commands)."""

from __future__ import annotations

from pathlib import Path

from .findings.model import Context
from .store.store import Store
from .store.workspace import GLOBAL


def make_context(root: Path, workspace: str | None) -> Context:
    active = () if workspace is None else (workspace,) if workspace != GLOBAL else (GLOBAL,)
    return Context(root=root, active=active)


def load_store(root: Path) -> Store:
    store = Store(root)
    store.load_all()
    return store
