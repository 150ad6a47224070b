"""The check context: everything a finding depends on besides the file itself.

A value, not global state: tests pass a fixed clock, the language server builds one from its settings
and folders, the CLI from its flags.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from .lifecycle import Thresholds
from .workspace import GLOBAL, with_equivalents


@dataclass(frozen=True)
class Context:
    root: Path
    active: tuple[str, ...] = ()  # realpath'd active workspaces; empty = operator view
    now: float = field(default_factory=time.time)
    thresholds: Thresholds = field(default_factory=Thresholds)
    severity: dict[str, str] = field(default_factory=dict)  # user overrides: code → level or "off"
    # What the disk said about a stamp's path during this check (exists, realpath, folder, worktree):
    # a whole-store check asks it once per repository, not once per memory. Not part of the context's
    # identity; a new context (each check) asks the disk again.
    disk: dict[str, object] = field(default_factory=dict, compare=False, hash=False, repr=False)


def cli_context(root: Path, workspace: str | None) -> Context:
    """The context of a CLI run: one active workspace, or none (the operator's view)."""
    active = () if workspace is None else (workspace,) if workspace != GLOBAL else (GLOBAL,)
    return Context(root=root, active=with_equivalents(active, root))
