"""The one way every door (the command line, the language server, the editors through it) syncs the
store and settles a conflict: this machine's repositories are recorded first (so the other machines can
map their stamps), the engine runs, and the report becomes the protocol's result. The diagnostics of
the conflicts on record (KM800) are in diagnostics.py, which the server and `check` share."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import attrs

from .. import protocol
from ..store.machine import MachineError, clean_name, this_machine
from ..store.paths import real_path, rel_of_virtual
from ..store.reader import Refused, read_file
from ..store.workspace_aliases import record_workspaces
from . import commitset, engine, files, records
from .git import SyncError
from .report import SyncReport

KEEP = ("mine", "theirs")
NEEDS_REMOTE = (
    "This store has no remote to sync with yet: give the address of a git repository once (a folder, an ssh "
    "address or a hosting service's git URL)."
)


def run_sync(
    root: Path, own: Iterable[str], remote: str | None = None, name: str | None = None
) -> protocol.SyncResult:
    """Record this machine's workspaces (its own paths, not the mapped ones), name this machine when a
    name is given (as `sync --name`), then sync. SyncError: a sentence saying why it could not be done."""
    if remote is not None and not remote.strip():
        raise SyncError("The remote is empty: give the address of a git repository (a folder, ssh or https).")
    if name is not None:
        from ..store.machine import rename_machine

        if not name.strip():
            raise SyncError("Give a name for this machine, such as laptop.")
        try:
            rename_machine(root, name)
        except MachineError as exc:
            raise SyncError(exc.message) from None
    here, gone = stamped_paths(root)
    record_workspaces(root, [*(w for w in own if w.startswith("/")), *here], keep=gone)
    try:
        report = engine.sync(root, remote=remote.strip() if remote else None)
    except SyncError as exc:
        if exc.message != engine.NO_REMOTE:
            raise
        return protocol.SyncResult(incoming=[], outgoing=[], conflicts=[], skipped=[], summary=[NEEDS_REMOTE],
                                   needs_remote=True)  # fmt: skip
    result = result_of(report, _name(root))
    flagged = secrets_out(root, [c.path for c in result.outgoing if c.kind != "delete"])
    if flagged:
        shown = ", ".join(flagged[:SHOWN]) + (
            f" and {len(flagged) - SHOWN} more" if len(flagged) > SHOWN else ""
        )
        n = len(flagged)
        said = (
            "A memory that went out looks like it holds"
            if n == 1
            else f"{n} memories that went out look like they hold"
        )
        sentence = (
            f"{said} a secret (KM602): {shown}. Keep the remote private, or move the secret out of the store."
        )
        result = attrs.evolve(result, summary=[*result.summary, sentence], secrets=flagged)
    return result


SHOWN = 10  # memories a sentence names before "and N more"
STAMP_BYTES = 4096  # of each memory, read for its `workspace` stamp (the frontmatter opens the file)


def stamped_paths(root: Path) -> tuple[list[str], list[str]]:
    """The paths the store's memories are stamped with: (those that are folders of this machine, those
    that are not). The first are recorded (a sync started outside any repository still records this
    machine's repositories: record_workspaces keeps those git knows an identity for); the record of the
    others is kept (a moved repository's memories find its new folder by the identity recorded for
    the old path, see workspace_aliases.new_homes)."""
    from ..store.memory import from_text
    from ..store.workspace_aliases import MAX_REPOSITORIES, valid_path

    here: dict[str, None] = {}
    gone: dict[str, None] = {}
    for rel in commitset.scan(root).paths:
        try:
            data = read_file(root / rel, STAMP_BYTES, within=root, truncate=True).data
        except (Refused, OSError):
            continue
        text = data.decode("utf-8", "replace")
        stamp = from_text(os.fspath(root / rel), f"/memories/{rel}", text, 0.0, len(data)).stamp
        for value in stamp if isinstance(stamp, list) else [stamp]:
            if isinstance(value, str) and value not in here and value not in gone and valid_path(value):
                (here if os.path.isdir(value) else gone)[value] = None
        if len(here) >= MAX_REPOSITORIES:
            break
    return list(here), list(gone)


SCAN_BYTES = 64 * 1024  # of each memory that went out, read for secrets (KM602 reads as much)


def secrets_out(root: Path, vpaths: list[str]) -> list[str]:
    """The memories among `vpaths` (just pushed) in which KM602 finds a secret (what the person marked as
    no secret left out, as in the diagnostics)."""
    from ..findings.content import secret_lines
    from ..store.frontmatter import split_lines

    out = []
    for vpath in vpaths:
        rel = rel_of_virtual(vpath)
        if not rel or not files.safe_rel(rel):
            continue
        try:
            data = read_file(real_path(root, vpath), SCAN_BYTES, within=root, truncate=True).data
        except (Refused, OSError):
            continue
        if next(secret_lines(split_lines(data.decode("utf-8", "replace"))), None) is not None:
            out.append(vpath)
    return out


def result_of(report: SyncReport, mine: str) -> protocol.SyncResult:
    def changes(found) -> list[protocol.SyncChange]:
        return [protocol.SyncChange(path=c.path, kind=c.kind, machine=c.machine) for c in found]

    return protocol.SyncResult(
        incoming=changes(report.incoming),
        outgoing=changes(report.outgoing),
        conflicts=[
            protocol.SyncConflict(
                path=c.path,
                kind=c.kind,
                kept=mine if c.kept == "mine" else c.other,
                other=c.other if c.kept == "mine" else mine,
            )
            for c in report.conflicts
        ],  # fmt: skip
        skipped=list(report.skipped),
        summary=report.summary(),
    )


def resolve_conflict(root: Path, vpath: str, keep: str) -> None:
    """Keep this machine's version ("mine") or the other's ("theirs") of a memory in conflict."""
    if keep not in KEEP:
        raise SyncError('Choose "mine" (this machine\'s version) or "theirs" (the other machine\'s).')
    records.resolve(root, vpath, keep)


def conflict_versions(root: Path, vpath: str) -> protocol.ConflictVersionsResult:
    """Both sides of the conflict on a memory, as text, for a side-by-side view."""
    record = records.find(root, vpath)
    if record is None:
        raise SyncError(f"There is no sync conflict on {vpath}.")
    try:
        me = this_machine(root)
    except MachineError as exc:
        raise SyncError(exc.message) from None
    mine, theirs = record.mine(me), record.theirs(me)
    if mine is None or theirs is None:
        names = " and ".join(clean_name(v.machine) for v in record.versions)
        raise SyncError(f"The conflict on {vpath} is between {names}, not this machine.")
    return protocol.ConflictVersionsResult(
        path=vpath, kind=record.kind, mine=_text(mine.content), theirs=_text(theirs.content),
        other=clean_name(theirs.machine),
    )  # fmt: skip


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def _name(root: Path) -> str:
    try:
        return this_machine(root).name
    except MachineError:
        return "this machine"
