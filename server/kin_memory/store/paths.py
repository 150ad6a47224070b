"""Virtual `/memories/...` paths, the hidden folder, and which files under the root are memories.

The one place that converts between virtual paths and paths on disk. These conversions are for trusted
virtual paths (made by the store, a listing, the index); untrusted input goes through tool.guard.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from .root import VIRTUAL_ROOT

INDEX_NAME = "MEMORY.md"
INDEX_VPATH = f"{VIRTUAL_ROOT}/{INDEX_NAME}"
# The server's own folder inside the root (recall index, audit log, tool lock, reflection staging).
# Hidden, so it is never a memory and the tool's guard never reaches it.
HIDDEN_DIR = ".kin-index"


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


def virtual_of_rel(rel: str) -> str:
    """`/memories/<rel>` for a posix path below the root; the root itself for ``""``."""
    return f"{VIRTUAL_ROOT}/{rel}" if rel else VIRTUAL_ROOT


def rel_of_virtual(vpath: str) -> str:
    """The posix path below the root that a trusted virtual path names (``""`` for the root)."""
    return vpath[len(VIRTUAL_ROOT) :].lstrip("/")


def virtual_path(root: Path, path: Path) -> str:
    parts = relative_parts(root, path)
    if parts is None:
        raise ValueError("path is outside the store")
    return str(PurePosixPath(VIRTUAL_ROOT, *parts)) if parts else VIRTUAL_ROOT


def real_path(root: Path, vpath: str) -> Path:
    """For trusted virtual paths only (listings, the index); untrusted input goes through tool.guard."""
    rel = rel_of_virtual(vpath)
    return root.joinpath(*PurePosixPath(rel).parts) if rel else root
