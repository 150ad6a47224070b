"""KM800: the memories a sync left in conflict, one diagnostic each, from the records in the synced
`.kin-sync/conflicts/` folder; the same for the language server and `kin-memory check`. Light to import
(no protocol types): `check` imports it only when the store has that folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..findings.model import Finding, Fix, line_span
from ..store.machine import MachineError, clean_name, this_machine
from ..store.paths import real_path, rel_of_virtual
from ..store.reader import Refused, read_file
from . import files, records
from .report import ANOTHER, self_named


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
        other = others[0] if others else ANOTHER
        kept = (
            "this machine's" if me is not None and record.kept_id == me.id else f"{clean_name(record.kept)}'s"
        )
        if record.kind == "delete-vs-edit":
            message = f"deleted on one machine and edited on another: the edit is kept ({kept} version)"
        else:
            message = (
                f"changed in the same place here and on {self_named(other)}: the file keeps {kept} version"
            )
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
