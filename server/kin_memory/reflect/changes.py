"""What a reflection pass staged: the change list read off the staging copy (see staging.py).

It becomes a proposal (reflect/propose.py), which is what the user reviews and what gets applied.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("create", "edit", "rename", "delete")


@dataclass(frozen=True)
class Change:
    kind: str  # create | edit | rename | delete
    path: str  # virtual path (for a rename: the new path)
    old_path: str | None = None  # rename: the old path
    before: bytes | None = None  # the store's bytes when staged (edit/delete/rename)
    after: bytes | None = None  # the staged bytes (create/edit)
    is_dir: bool = False
    conflict: bool = False  # the store's file changed while the pass ran


def summary_of(changes: list[Change]) -> str:
    if not changes:
        return "no changes"
    counts = {k: sum(1 for c in changes if c.kind == k) for k in KINDS}
    words = {"create": "created", "edit": "edited", "rename": "renamed", "delete": "deleted"}
    return ", ".join(f"{n} {words[k]}" for k, n in counts.items() if n)
