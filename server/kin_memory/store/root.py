"""Where the memory store lives: `--root` → KIN_MEMORY_DIR → the editor's `memoryDir` setting → global
`memory_dir` → `~/.kin/memory` (one order, stated the same in every door's documentation)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .settings import global_settings_path, load_settings_file

if TYPE_CHECKING:  # a type only: the protocol module (attrs, cattrs) is not needed to find the root
    from ..protocol import RootSource

VIRTUAL_ROOT = "/memories"


@dataclass(frozen=True)
class RootChoice:
    path: Path  # absolute, user-expanded, realpath'd when it exists
    source: RootSource


def _norm(p: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(p))))


def resolve_root(
    explicit: str | None = None,
    *,
    editor_setting: str | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> RootChoice:
    """Resolve the store root. Project settings are never consulted: they must not move the store."""
    env = os.environ if env is None else env
    if explicit:
        return RootChoice(_norm(explicit), "argument")
    if env.get("KIN_MEMORY_DIR"):
        return RootChoice(_norm(env["KIN_MEMORY_DIR"]), "KIN_MEMORY_DIR")
    if editor_setting:
        return RootChoice(_norm(editor_setting), "editor setting")
    settings = load_settings_file(global_settings_path(home), project=False)
    value = settings.values.get("memory_dir")
    if isinstance(value, str) and value.strip():
        return RootChoice(_norm(value), "global settings")
    return RootChoice(_norm((home or Path.home()) / ".kin" / "memory"), "default")
