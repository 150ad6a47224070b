"""The recall neighbours of a transcript: what the store already knows about it, so the model updates an
existing memory instead of writing a near-duplicate. Recall is a cache; when it fails there are none."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("kin_memory.reflect")
LIMIT = 5
BODY_CHARS = 1200


@dataclass(frozen=True)
class Neighbour:
    vpath: str
    category: str
    workspace: str | None
    body: str


def neighbours(root: Path, text: str, active: tuple[str, ...] | None, limit: int = LIMIT) -> list[Neighbour]:
    try:
        from ..recall.service import Recall
        from ..store.settings import effective_settings

        recall = Recall(root, semantic=effective_settings().recall_semantic)
        recall.sync_disk()  # only new or changed files are read
        hits = recall.related_text(text, active or None, limit=limit)
        return [Neighbour(h.vpath, h.category, h.workspace, h.body[:BODY_CHARS]) for h in hits]
    except Exception as exc:  # noqa: BLE001 - recall being unavailable must not stop reflection
        log.warning("reflection: no recall neighbours (%s)", type(exc).__name__)
        return []
