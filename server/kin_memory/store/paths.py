"""Virtual `/memories/...` paths and which files under the root are memories."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from .root import VIRTUAL_ROOT

INDEX_NAME = "MEMORY.md"


def relative_parts(root: Path, path: Path) -> tuple[str, ...] | None:
    """The path's components below root, or None when it is not below root."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(root)
    except ValueError:
        return None
    return rel.parts


def is_hidden(parts: tuple[str, ...]) -> bool:
    return any(p.startswith(".") for p in parts)


def is_memory_rel(parts: tuple[str, ...]) -> bool:
    """A memory file: `*.md` at any depth, no hidden component, not the root MEMORY.md."""
    if not parts or is_hidden(parts) or not parts[-1].endswith(".md"):
        return False
    return parts != (INDEX_NAME,)


def is_index_rel(parts: tuple[str, ...]) -> bool:
    return parts == (INDEX_NAME,)


def virtual_path(root: Path, path: Path) -> str:
    parts = relative_parts(root, path)
    if parts is None:
        raise ValueError("path is outside the store")
    return str(PurePosixPath(VIRTUAL_ROOT, *parts)) if parts else VIRTUAL_ROOT


def real_path(root: Path, vpath: str) -> Path:
    """For trusted virtual paths only (listings); untrusted input goes through tool.guard."""
    rel = vpath[len(VIRTUAL_ROOT) :].lstrip("/")
    return root.joinpath(*PurePosixPath(rel).parts) if rel else root
