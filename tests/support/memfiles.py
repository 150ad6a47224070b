"""Writing memory files for tests: frontmatter, body and an age."""

from __future__ import annotations

import os
import time
from pathlib import Path


def write(root: Path, rel: str, text: str, age_days: float = 0.0) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if age_days:
        t = time.time() - age_days * 86400
        os.utime(path, (t, t))
    return path


def memory(category: str | None, body: str, workspace: str | None = None) -> str:
    head = []
    if category is not None:
        head.append(f"category: {category}")
    if workspace is not None:
        head.append(f"workspace: {workspace}")
    return "---\n" + "".join(h + "\n" for h in head) + "---\n" + body
