"""Shared helpers of the reflection tests."""

from __future__ import annotations

import os
from pathlib import Path

KEY = "sk-test-SECRET-0123456789"
KEY_ENV = "KIN_TEST_REFLECT_KEY"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    return path


def snapshot(root: Path) -> dict[str, bytes]:
    """Every non-hidden file of the store with its bytes (the hidden index folder is a cache)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = p.read_bytes()
    return out
