"""Retention: how many versions each memory keeps, for how long, and how much the store holds in all.

The limits live in the version database (the editor setting is written there by the language server),
so the command line prunes exactly as the server does. What is never dropped: a memory's newest version
(what it holds now), its newest version with content (what a restore of a deleted memory brings back)
and the content the user last reviewed (the review queue diffs against it).
"""

from __future__ import annotations

import sqlite3

from .db import HistoryDB, Retention

_KEYS = {"versions": "keep_versions", "days": "keep_days", "max_bytes": "max_bytes"}
CHUNK = 256  # versions looked at per round when the store is over its total size
RETRY_BYTES = 1024 * 1024  # kept since a prune could not get under the bound, before it tries again


def limits(conn: sqlite3.Connection) -> Retention:
    base = Retention()
    try:
        return Retention(
            versions=int(HistoryDB.meta(conn, _KEYS["versions"]) or base.versions),
            days=float(HistoryDB.meta(conn, _KEYS["days"]) or base.days),
            max_bytes=int(HistoryDB.meta(conn, _KEYS["max_bytes"]) or base.max_bytes),
        )
    except ValueError:
        return base


def set_limits(conn: sqlite3.Connection, r: Retention) -> None:
    HistoryDB.set_meta(conn, _KEYS["versions"], str(r.versions))
    HistoryDB.set_meta(conn, _KEYS["days"], repr(r.days))
    HistoryDB.set_meta(conn, _KEYS["max_bytes"], str(r.max_bytes))


def _protected(conn: sqlite3.Connection, vpath: str, rows: list) -> set[int]:
    keep = {rows[0].id} if rows else set()
    with_content = next((v for v in rows if v.sha), None)
    if with_content is not None:
        keep.add(with_content.id)
    mark = conn.execute("SELECT sha FROM reviewed WHERE vpath=?", (vpath,)).fetchone()
    if mark is not None:
        reviewed = next((v for v in rows if v.sha == mark[0]), None)
        if reviewed is not None:
            keep.add(reviewed.id)
    return keep


def _drop(conn: sqlite3.Connection, ids: list[int], shas: set[str]) -> None:
    conn.executemany("DELETE FROM versions WHERE id=?", [(i,) for i in ids])
    HistoryDB.drop_unreferenced(conn, shas)


def prune_memory(conn: sqlite3.Connection, vpath: str, when: float) -> None:
    """Drop this memory's versions past the newest `versions` or older than `days`."""
    r = limits(conn)
    rows = HistoryDB.versions(conn, vpath)
    if len(rows) <= r.versions and (not rows or rows[-1].time >= when - r.days * 86400):
        return  # the common case: nothing to drop
    keep = _protected(conn, vpath, rows)
    cutoff = when - r.days * 86400
    room = max(0, r.versions - len(keep))  # the protected versions count towards the limit
    others = [v for v in rows if v.id not in keep]
    drop = [v for i, v in enumerate(others) if i >= room or v.time < cutoff]
    if drop:
        _drop(conn, [v.id for v in drop], {v.sha for v in drop if v.sha})


def total(conn: sqlite3.Connection) -> int:
    return int(HistoryDB.meta(conn, "total") or 0)


def current_bytes(conn: sqlite3.Connection) -> int:
    """Stored bytes of what the memories hold now (their newest versions): not history, never dropped."""
    row = conn.execute(
        "SELECT total(stored) FROM blobs WHERE sha IN (SELECT sha FROM versions WHERE id IN "
        "(SELECT max(id) FROM versions GROUP BY vpath))"
    ).fetchone()
    return int(row[0] or 0)


def prune_total(conn: sqlite3.Connection) -> None:
    """While the previous versions take more than `max_bytes` (the memories' current contents are not
    counted: they are the store itself), drop the oldest first, of any memory.

    The check is one counter read while the whole store is under the bound; past it, the current
    contents are measured once per megabyte kept, so a tool write on a large store stays cheap.
    """
    r = limits(conn)
    now_total = total(conn)
    if now_total <= r.max_bytes:
        return
    floor = int(HistoryDB.meta(conn, "prune_floor") or 0)
    if floor and now_total < floor + min(RETRY_BYTES, max(r.max_bytes // 10, 1)):
        return
    budget = r.max_bytes + current_bytes(conn)
    after = 0
    while total(conn) > budget:
        rows = conn.execute(
            "SELECT id, vpath, sha FROM versions WHERE id > ? AND id NOT IN "
            "(SELECT max(id) FROM versions GROUP BY vpath) ORDER BY id LIMIT ?",
            (after, CHUNK),
        ).fetchall()
        if not rows:
            break  # only protected versions are left
        for vid, vpath, sha in rows:
            after = vid
            if vid in _protected(conn, vpath, HistoryDB.versions(conn, vpath)):
                continue
            _drop(conn, [vid], {sha} if sha else set())
            if total(conn) <= budget:
                break
    # under the bound, or nothing more can go: look again once a megabyte more is kept
    HistoryDB.set_meta(conn, "prune_floor", str(total(conn)))
