"""The review queue: what changed since the user last looked.

A reviewed mark per memory is the hash of the content the user last accepted (the first catch-up marks
the whole store). Every memory whose newest version differs from its mark is in the queue: created (no
mark), changed, or deleted (a mark, no content now), with the unified diff against the reviewed content.
Accepting moves the mark to the newest version; reverting writes the reviewed content back (a restore)
or, for a memory created since, deletes it through the tool.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .db import HistoryDB, HistoryUnavailable, database, now
from .query import HistoryError
from .restore import write_back

ChangeKind = Literal["created", "changed", "deleted"]
DIFF_LIMIT = 64 * 1024  # characters of diff per memory; the editors open the whole versions to compare


@dataclass(frozen=True)
class QueuedChange:
    path: str
    kind: ChangeKind
    since: float  # when the first unreviewed version was kept
    source: str  # who wrote the newest version
    diff: str
    version: int  # the newest version
    reviewed_version: int | None  # a version holding the reviewed content, when one is still kept


def _text(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines(keepends=True)


def unified(vpath: str, before: bytes | None, after: bytes | None) -> str:
    lines = difflib.unified_diff(
        _text(before), _text(after),
        fromfile="/dev/null" if before is None else f"a{vpath}",
        tofile="/dev/null" if after is None else f"b{vpath}",
    )  # fmt: skip
    out = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return out if len(out) <= DIFF_LIMIT else out[:DIFF_LIMIT] + "\n… (diff cut)\n"


def _latest_all(conn) -> dict[str, tuple[int, float, str, str | None]]:
    rows = conn.execute(
        "SELECT vpath, id, time, source, sha FROM versions WHERE id IN (SELECT max(id) FROM versions GROUP BY vpath)"
    )
    return {v: (i, t, s, h) for v, i, t, s, h in rows}


def _queued(conn, vpath: str, latest, mark: str | None) -> QueuedChange | None:
    vid, _time, source, sha = latest
    if sha == mark or (sha is None and mark is None):
        return None
    kind: ChangeKind = "created" if mark is None else "deleted" if sha is None else "changed"
    rows = HistoryDB.versions(conn, vpath)  # newest first
    since, reviewed_version = rows[-1].time, None
    for older, newer in zip(rows[1:], rows, strict=False):
        if mark is not None and older.sha == mark:
            since, reviewed_version = newer.time, older.id
            break
    before = HistoryDB.blob(conn, mark) if mark else None
    after = HistoryDB.blob(conn, sha) if sha else None
    return QueuedChange(vpath, kind, since, source, unified(vpath, before, after), vid, reviewed_version)


def changes(root: Path | str) -> list[QueuedChange]:
    """Every memory changed since it was last reviewed, by path."""
    try:
        with database(root).transaction() as conn:
            marks = dict(conn.execute("SELECT vpath, sha FROM reviewed").fetchall())
            out = []
            for vpath, latest in sorted(_latest_all(conn).items()):
                change = _queued(conn, vpath, latest, marks.get(vpath))
                if change is not None:
                    out.append(change)
            return out
    except HistoryUnavailable as exc:
        raise HistoryError(f"The changes cannot be read: {exc.reason}.") from None


def queue_size(root: Path | str) -> int:
    """How many entries `changes` lists, without computing their diffs (the health view's count)."""
    try:
        with database(root).transaction() as conn:
            marks = dict(conn.execute("SELECT vpath, sha FROM reviewed").fetchall())
            return sum(1 for v, row in _latest_all(conn).items() if row[3] != marks.get(v))
    except HistoryUnavailable as exc:
        raise HistoryError(f"The changes cannot be read: {exc.reason}.") from None


def accept(root: Path | str, paths: list[str] | None) -> list[str]:
    """Mark these memories (all of the queue when None) reviewed as they are now; the paths accepted
    (those of them that were in the queue)."""
    try:
        with database(root).transaction() as conn:
            latest = _latest_all(conn)
            marks = dict(conn.execute("SELECT vpath, sha FROM reviewed").fetchall())
            queued = [v for v, row in latest.items() if row[3] != marks.get(v)]
            wanted = queued if paths is None else [p for p in dict.fromkeys(paths) if p in queued]
            for vpath in wanted:
                sha = latest[vpath][3]
                if sha is None:
                    conn.execute("DELETE FROM reviewed WHERE vpath=?", (vpath,))
                else:
                    conn.execute("INSERT OR REPLACE INTO reviewed VALUES(?, ?, ?)", (vpath, sha, now()))
            return wanted
    except HistoryUnavailable as exc:
        raise HistoryError(f"The changes could not be accepted: {exc.reason}.") from None


def revert(root: Path | str, vpath: str) -> str:
    """Bring `vpath` back to its reviewed content (a memory created since is deleted through the tool);
    what was done, as a sentence."""
    try:
        with database(root).transaction() as conn:
            mark = conn.execute("SELECT sha FROM reviewed WHERE vpath=?", (vpath,)).fetchone()
            data = HistoryDB.blob(conn, mark[0]) if mark else None
            mtime = HistoryDB.mtime_of(conn, vpath, mark[0]) if mark else None
    except HistoryUnavailable as exc:
        raise HistoryError(f"{vpath} could not be reverted: {exc.reason}.") from None
    if mark is not None and data is None:
        raise HistoryError(f"The reviewed content of {vpath} is no longer kept.")
    if data is not None:
        write_back(root, vpath, data, mtime)  # with its age: a memory deleted when expired comes back expired
        return f"{vpath} holds its reviewed content again."
    from ..tool.commands import ToolContext, run_tool

    res = run_tool(
        {"command": "delete", "path": vpath}, ToolContext(root=Path(os.fspath(root)), source="restore")
    )
    if res.is_error:
        raise HistoryError(res.content)
    return f"{vpath} was created since the last review: it was deleted (its history keeps it)."
