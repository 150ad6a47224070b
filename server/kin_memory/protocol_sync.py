"""The sync commands' part of the typed protocol (`kin.memory.sync`, `resolveConflict`,
`conflictVersions`): kept apart so protocol.py stays one readable module; protocol.py re-exports every
class here, and the editors' mirrors are generated from both."""

from __future__ import annotations

import attrs


@attrs.frozen
class SyncParams:
    remote: str | None = None  # set the store's remote once (a folder, ssh or https); later syncs omit it
    name: str | None = None  # this machine's name as the others see it (as `sync --name`; default: host name)


@attrs.frozen
class SyncChange:
    path: str  # /memories/...
    kind: str  # create | edit | delete
    machine: str  # the machine it came from (incoming) or this one (outgoing)


@attrs.frozen
class SyncConflict:
    path: str
    kind: str  # overlap | delete-vs-edit
    kept: str  # the machine whose version the file keeps
    other: str  # the machine whose version is kept in history and in the conflict record


@attrs.frozen
class SyncResult:
    incoming: list[SyncChange]
    outgoing: list[SyncChange]
    conflicts: list[SyncConflict]
    skipped: list[str]  # sentences: a file changed during the sync is left for the next one
    summary: list[str]  # the report as sentences, for a message or a terminal
    needs_remote: bool = False  # nothing was done: ask for the remote's address, then sync with it
    secrets: list[str] = attrs.field(factory=list)  # memories that went out holding what looks like a secret


@attrs.frozen
class ResolveConflictParams:
    uri: str
    keep: str  # "mine" (this machine's version) or "theirs" (the other machine's)


@attrs.frozen
class ConflictParams:
    uri: str


@attrs.frozen
class ConflictVersionsResult:  # both sides of a memory in conflict (None: that side deleted it)
    path: str
    kind: str  # overlap | delete-vs-edit
    mine: str | None  # this machine's version
    theirs: str | None
    other: str  # the other machine's name
