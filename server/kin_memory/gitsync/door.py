"""The one way every door (the command line, the language server, the editors through it) syncs the
store and settles a conflict: this machine's repositories are recorded first (so the other machines can
map their stamps), the engine runs, and the report becomes the protocol's result. The diagnostics of
the conflicts on record (KM800) are made here too, for the server and for `check` alike."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from .. import protocol
from ..findings.model import Finding, Fix, line_span
from ..store.machine import MachineError, clean_name, this_machine
from ..store.paths import real_path, rel_of_virtual
from ..store.reader import Refused, read_file
from ..store.workspace_aliases import record_workspaces
from . import engine, files, records
from .git import SyncError
from .report import SyncReport

KEEP = ("mine", "theirs")
NEEDS_REMOTE = (
    "This store has no remote to sync with yet: give the address of a git repository once (a folder, an ssh "
    "address or a hosting service's git URL)."
)


def run_sync(root: Path, own: Iterable[str], remote: str | None = None) -> protocol.SyncResult:
    """Record this machine's workspaces (its own paths, not the mapped ones), then sync.
    SyncError: a sentence saying why it could not be done."""
    if remote is not None and not remote.strip():
        raise SyncError("The remote is empty: give the address of a git repository (a folder, ssh or https).")
    record_workspaces(root, [w for w in own if w.startswith("/")])
    try:
        report = engine.sync(root, remote=remote.strip() if remote else None)
    except SyncError as exc:
        if exc.message != engine.NO_REMOTE:
            raise
        return protocol.SyncResult(incoming=[], outgoing=[], conflicts=[], skipped=[], summary=[NEEDS_REMOTE],
                                   needs_remote=True)  # fmt: skip
    return result_of(report, _name(root))


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


def conflict_findings(
    root: Path, lines_of: Callable[[str], tuple[str, ...] | list[str] | None]
) -> dict[str, list[Finding]]:
    """KM800 for every memory with a conflict on record, on its first line: which machine's version it
    keeps and the fixes. `lines_of(vpath)`: the memory's lines, None when it is not in the store (a
    record synced from elsewhere names any path: only a memory here gets a diagnostic)."""
    found = records.conflicts(root)
    if not found:
        return {}  # most stores: no record, and no machine identity made just to say so
    try:
        me = this_machine(root)
    except MachineError:
        me = None
    out: dict[str, list[Finding]] = {}
    for record in found:
        lines = lines_of(record.path)
        if lines is None:
            continue
        # names come from a synced file: one line, no control characters, bounded
        others = [clean_name(v.machine) for v in record.versions if me is None or v.machine_id != me.id]
        other = others[0] if others else "another machine"
        kept = (
            "this machine's" if me is not None and record.kept_id == me.id else f"{clean_name(record.kept)}'s"
        )
        if record.kind == "delete-vs-edit":
            message = f"deleted on one machine and edited on another: the edit is kept ({kept} version)"
        else:
            message = f"changed in the same place here and on {other}: the file keeps {kept} version"
        fixes = (
            Fix("Keep this machine's version", command="resolveConflict", argument=(("keep", "mine"),)),
            Fix(f"Keep {other}'s version", command="resolveConflict", argument=(("keep", "theirs"),)),
            Fix("Open both versions side by side", command="compareConflict"),
        ) if me is not None and record.mine(me) is not None and record.theirs(me) is not None else ()  # fmt: skip
        out[record.path] = [Finding("KM800", line_span(lines, 0), message, fixes=fixes)]
    return out


FIRST_LINES = 4096  # bytes of a memory read to place its KM800 (the diagnostic sits on line 0)


def disk_lines(root: Path) -> Callable[[str], list[str] | None]:
    """lines_of for a door with no loaded store (the command line): a record's path is a memory here
    when it is a regular markdown file inside the store, reached through no link out of it."""

    def lines_of(vpath: str) -> list[str] | None:
        rel = rel_of_virtual(vpath)
        if not rel or not files.safe_rel(rel) or not rel.endswith(".md"):
            return None
        try:
            data = read_file(real_path(root, vpath), FIRST_LINES, within=root, truncate=True).data
        except (Refused, OSError):
            return None
        return data.decode("utf-8", "replace").splitlines() or [""]

    return lines_of
