"""What a sync did, and the sentences that say it (the command line and the editors show the same)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ChangeKind = Literal["create", "edit", "delete"]
ConflictKind = Literal["overlap", "delete-vs-edit"]
Side = Literal["mine", "theirs"]
SHOWN = 10  # changes a sentence names before "and N more"
ANOTHER = "another machine"  # the name of a machine whose commits carry no identity
_DONE = {"create": "new", "edit": "edited", "delete": "deleted"}


@dataclass(frozen=True)
class Change:
    path: str  # virtual path, /memories/…
    kind: ChangeKind
    machine: str  # the machine the change was made on


@dataclass(frozen=True)
class Conflict:
    path: str
    kind: ConflictKind
    kept: Side  # whose version the file keeps: this machine's ("mine") or the other's ("theirs")
    other: str  # the other machine's name
    deleted: Side | None = None  # delete-vs-edit: which side deleted


@dataclass
class SyncReport:
    incoming: list[Change] = field(default_factory=list)
    outgoing: list[Change] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # sentences: what was left for the next sync, and why
    remote_was_empty: bool = False

    def summary(self) -> list[str]:
        """Sentences for people: what came in, what went out, what conflicted, what was left."""
        if not (self.incoming or self.outgoing or self.conflicts or self.skipped):
            return ["Nothing to sync: this store and the remote already hold the same memories."]
        out: list[str] = []
        if self.incoming:
            out.append(_listed("came in", self.incoming, by=True))
        if self.outgoing:
            out.append(_listed("went out", self.outgoing, by=False))
        out += [conflict_sentence(c) for c in self.conflicts]
        out += self.skipped
        return out


def _listed(verb: str, changes: list[Change], *, by: bool) -> str:
    count = f"{len(changes)} change" + ("" if len(changes) == 1 else "s")
    named = [f"{c.path} ({_DONE[c.kind]}" + (f" on {c.machine})" if by else ")") for c in changes[:SHOWN]]
    more = f" and {len(changes) - SHOWN} more" if len(changes) > SHOWN else ""
    # a machine's name comes from a commit anyone who can push may write: said to be unverified
    named_by = (
        "; machine names are as their commits give them"
        if by and any(c.machine != ANOTHER for c in changes)
        else ""
    )
    return f"{count} {verb}: {', '.join(named)}{more}{named_by}."


def self_named(machine: str) -> str:
    """A machine's name as first shown in a sentence: it comes from a synced file or commit anyone who can
    push may write, so it is said to be the machine's own (unverified) name."""
    return machine if machine == ANOTHER else f"{machine} (as that machine names itself)"


def conflict_sentence(c: Conflict) -> str:
    first = self_named(c.other)
    if c.kind == "overlap":
        if c.kept == "mine":
            return (f"{c.path} was changed in the same place here and on {first}: it keeps this machine's "
                    f"version; {c.other}'s version is kept in the conflict record and in the store's history.")  # fmt: skip
        return (f"{c.path} was changed in the same place here and on {first}: it keeps {c.other}'s version; "
                "this machine's version is kept in the conflict record and in the store's history.")  # fmt: skip
    if c.deleted == "theirs":
        return f"{c.path} was deleted on {first} and edited here: the edit is kept."
    return f"{c.path} was edited on {first} and deleted here: {c.other}'s edit is kept."
