"""A proposal: what a model pass or a bulk fix would change, kept whole so that what the user reviews is
exactly what gets written.

Each change carries the full text before and after (None where the file is absent), a unified diff for
display, and a hash of the exact bytes it was computed from: applying refuses a file whose bytes no
longer hash to it (a conflict), so an edit made meanwhile is never overwritten.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

ChangeKind = Literal["create", "edit", "rename", "delete"]


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def text_of(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


@dataclass(frozen=True)
class ProposedChange:
    kind: ChangeKind
    path: str  # the virtual path (for a rename: the old one)
    new_path: str | None  # a rename's new virtual path
    workspace: str | None  # the memory's stamp (after the change where there is an after)
    before: str | None
    after: str | None
    before_sha256: str | None  # of the exact bytes `before` was read from
    after_bytes: bytes | None = field(default=None, repr=False)  # exactly what applying writes

    @property
    def diff(self) -> str:
        return unified_diff(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "newPath": self.new_path,
            "workspace": self.workspace,
            "before": self.before,
            "after": self.after,
            "diff": self.diff,
            "beforeSha256": self.before_sha256,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProposedChange:
        after = data.get("after")
        return cls(
            kind=data["kind"],
            path=data["path"],
            new_path=data.get("newPath"),
            workspace=data.get("workspace"),
            before=data.get("before"),
            after=after,
            before_sha256=data.get("beforeSha256"),
            after_bytes=None if after is None else after.encode("utf-8"),
        )


@dataclass(frozen=True)
class Proposal:
    id: str
    source: str  # reflect | init | consolidate | fix
    summary: str
    created: float  # epoch seconds
    workspace: str | None  # the active workspace the pass ran for
    changes: tuple[ProposedChange, ...]
    tool_calls: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "summary": self.summary,
            "created": self.created,
            "workspace": self.workspace,
            "toolCalls": self.tool_calls,
            "changes": [c.to_json() for c in self.changes],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Proposal:
        return cls(
            id=data["id"],
            source=data["source"],
            summary=data["summary"],
            created=float(data["created"]),
            workspace=data.get("workspace"),
            changes=tuple(ProposedChange.from_json(c) for c in data["changes"]),
            tool_calls=int(data.get("toolCalls", 0)),
        )


def unified_diff(change: ProposedChange) -> str:
    """The change as the user reads it: a unified diff (a rename also names both paths)."""
    head = f"rename from {change.path}\nrename to {change.new_path}\n" if change.kind == "rename" else ""
    before = [] if change.before is None else change.before.splitlines(keepends=True)
    after = [] if change.after is None or change.kind == "rename" else change.after.splitlines(keepends=True)
    if change.kind == "rename":
        return head
    old = "/dev/null" if change.kind == "create" else change.path
    new = "/dev/null" if change.kind == "delete" else change.path
    lines = []
    for line in difflib.unified_diff(before, after, old, new):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return head + "".join(lines)


def proposed(
    kind: ChangeKind, path: str, before: bytes | None, after: bytes | None, new_path: str | None = None
) -> ProposedChange:
    """A change from the exact bytes before and after (the stamp is read from the text after, else before)."""
    from ..store.memory import from_text  # the store imports nothing from here: no cycle, just late

    text = text_of(after if after is not None else before) or ""
    stamp = from_text(Path(path), path, text, 0.0, len(text)).stamp
    return ProposedChange(
        kind=kind,
        path=path,
        new_path=new_path,
        workspace=stamp if isinstance(stamp, str) else None,
        before=text_of(before),
        after=text_of(after),
        before_sha256=sha256(before),
        after_bytes=after,
    )
