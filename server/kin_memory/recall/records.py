"""The recall index's input record, made from the store's Memory (the one parser of memory files)."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.categories import SESSION
from ..store.freshness import UNSURE
from ..store.memory import BODY_CAP, Memory
from ..store.paths import rel_of_virtual
from ..store.references import references
from ..store.workspace import GLOBAL, stamp_kind

OVERLAY_SIZE = -1  # the size recorded for an unsaved editor buffer: never matches a file on disk


@dataclass(frozen=True)
class RecallDoc:
    vpath: str
    title: str
    body: str  # capped at BODY_CAP bytes: recall never reads past the cap
    category: str  # effective category: project-fact / preference / episodic / session
    workspace: str | None  # the stamp when it is a string (shown in results), else None
    scope: str | None  # what the workspace filter compares: "global" (legacy/global), the stamp, or None
    mtime: float
    size: int
    key: int  # the file's freshness key (store/freshness.py); UNSURE for an editor buffer
    # The `/memories/…` paths its text refers to (store/references.py), sessions and text past the body's
    # cap included, so a rename asks the index which memories name the old path; None: not known (an
    # editor buffer, whose file on disk may say otherwise).
    refs: frozenset[str] | None = None

    @property
    def indexed(self) -> bool:
        """Session memories are recorded (so a warm restart skips them) but never indexed."""
        return self.category != SESSION


def scope_of(stamp: object) -> str | None:
    """The filter key: legacy and `global` are visible everywhere; a path or label only where it is
    active; a hostile or non-string stamp matches no workspace (only the operator view sees it)."""
    kind = stamp_kind(stamp)
    if kind in ("absent", "global"):
        return GLOBAL
    if kind in ("path", "label"):
        return stamp  # type: ignore[return-value]
    return None


def capped_body(body: str) -> str:
    if len(body) * 4 <= BODY_CAP:  # no character is wider than 4 bytes: certainly under the cap
        return body
    data = body.encode("utf-8", "surrogatepass")
    if len(data) <= BODY_CAP:
        return body
    return data[:BODY_CAP].decode("utf-8", "ignore")


def path_text(vpath: str) -> str:
    """What the path column holds: `/memories/facts/deploy-topology.md` → `facts/deploy-topology`
    (the prefix and the suffix are in every row and would only dilute the column)."""
    rel = rel_of_virtual(vpath)
    return rel[:-3] if rel.endswith(".md") else rel


def doc_from_memory(memory: Memory, *, overlay: bool = False) -> RecallDoc | None:
    """None for files recall cannot use (MEMORY.md, unreadable files)."""
    if memory.is_index or memory.read_error:
        return None
    stamp = memory.stamp
    indexed = memory.category != SESSION
    return RecallDoc(
        vpath=memory.vpath,
        title=memory.title if indexed else "",
        body=capped_body(memory.body) if indexed else "",
        category=memory.category,
        workspace=stamp if isinstance(stamp, str) else None,
        scope=scope_of(stamp),
        mtime=memory.mtime,
        size=OVERLAY_SIZE if overlay else memory.size,
        key=UNSURE if overlay else memory.key,
        refs=None if overlay or memory.compact else references(memory.text),
    )
