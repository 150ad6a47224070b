"""The recall index's own input record (independent of the store model)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RecallDoc:
    vpath: str
    title: str
    body: str
    category: str  # effective category: project-fact / preference / episodic / session
    workspace: str | None
    mtime: float
    size: int
