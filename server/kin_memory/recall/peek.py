"""Read-only looks at the recall index: how many memories it holds, how far behind the files it is.

Asked next to a running server (a command line) or before the server has opened the index (the start-up
workers), so these never create, migrate or rebuild the database (which `RecallIndex` does on a schema it
does not know) and read a committed snapshot (WAL). Light on imports: a start-up worker loads only this.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import TypeVar

from ..store.freshness import unchanged
from ..store.paths import HIDDEN_DIR, hidden_file_problem

SCHEMA_VERSION = 4  # 4: a broken frontmatter's stamp is read by a line scan (3: docs keep the key)
DB_NAME = "recall.sqlite3"
# The memories with a full-text row (every one but session memories: writer._put), counted from `docs`: a
# count of the full-text table walks it (13 ms at 10k against 0.5 ms), and the server counts after writes.
INDEXED_COUNT = "SELECT count(*) FROM docs WHERE category <> 'session'"
DB_SUFFIXES = ("", "-wal", "-shm", "-journal")  # the database and the files SQLite keeps beside it
T = TypeVar("T")


def _open_read_only(root: Path | str) -> sqlite3.Connection | None:
    """The index of this schema version, read-only; None when there is no usable one."""
    path = Path(root) / HIDDEN_DIR / DB_NAME
    if not path.is_file() or any(hidden_file_problem(root, DB_NAME + s) for s in DB_SUFFIXES):
        return None
    try:
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error:
        return None
    try:
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) == SCHEMA_VERSION:
            return conn
    except sqlite3.Error:
        pass
    conn.close()
    return None


def index_usable(root: Path | str) -> bool:
    """Whether there is an index of this schema version to read."""
    conn = _open_read_only(root)
    if conn is None:
        return False
    conn.close()
    return True


def _asked(root: Path | str, ask: Callable[[sqlite3.Connection], T]) -> T | None:
    """ask(the index, opened read-only); None when there is no usable index or the read failed."""
    conn = _open_read_only(root)
    if conn is None:
        return None
    with closing(conn):
        try:
            return ask(conn)
        except sqlite3.Error:
            return None


def _below(folder: str) -> tuple[str, str]:
    """The range of every path below a folder: ("/f/", "/f0"), "0" being the character after "/"."""
    base = folder.rstrip("/") + "/"
    return base, base[:-1] + "0"


def peek_count(root: Path | str) -> int | None:
    """How many memories the index holds; None when there is no usable index."""
    return _asked(root, lambda c: int(c.execute(INDEXED_COUNT).fetchone()[0]))


class Lag:
    """How many writes or removals a sync of the index would make, counted as the files' (vpath,
    freshness key) come in, a chunk at a time: only those rows of the index are read, never the whole of it.
    `behind()` is None when there is no usable index. Used by one thread (its connection's)."""

    BATCH = 500  # vpaths asked per query (well under SQLite's variable limit)

    def __init__(self, root: Path | str, keep: int = 0) -> None:
        """`keep`: how many of the changed files' vpaths to keep (see `changed_vpaths`)."""
        self.conn = _open_read_only(root)
        self.changed = 0  # files the index lacks or holds with another freshness key
        self.matched = 0  # files the index holds (changed or not)
        self.keep = keep
        self.changed_vpaths: list[str] = []  # the first `keep` of them
        self.gone_count = 0  # the index's memories no file came in for (known after `behind`)

    def add(self, files: list[tuple[str, int]]) -> None:
        conn = self.conn
        if conn is None:
            return
        try:
            for start in range(0, len(files), self.BATCH):
                part = files[start : start + self.BATCH]
                marks = ",".join("?" * len(part))
                rows = conn.execute(f"SELECT vpath, key FROM docs WHERE vpath IN ({marks})",
                                    [vpath for vpath, _ in part]).fetchall()  # fmt: skip
                held = dict(rows)
                self.matched += len(held)
                changed = [vpath for vpath, key in part if not unchanged(held.get(vpath), key)]
                self.changed += len(changed)
                self.changed_vpaths += changed[: max(0, self.keep - len(self.changed_vpaths))]
        except sqlite3.Error:
            self.close()

    def sealed(self) -> dict[int, bytes]:
        """The index's seals (see `seal` in index.py): segment → digest of what it holds of it."""
        if self.conn is None:
            return {}
        try:
            rows = self.conn.execute("SELECT seg, listing FROM seal").fetchall()
        except sqlite3.Error:  # an index made before seals
            return {}
        return {seg: listing for seg, listing in rows if isinstance(seg, int) and isinstance(listing, bytes)}

    def add_segment(self, files: list[tuple[str, int]], digest: bytes, seals: dict[int, bytes],
                    seg: int) -> None:  # fmt: skip
        """A segment's files: matched as a whole when the index's seal of it is their digest, else
        compared row by row (`add`)."""
        if self.conn is not None and seals.get(seg) == digest:
            self.matched += len(files)
        else:
            self.add(files)

    def behind(self) -> int | None:
        """The count so far, with the index's memories no file came in for (removed from the store)."""
        conn = self.conn
        if conn is None:
            return None
        try:
            (total,) = conn.execute("SELECT count(*) FROM docs").fetchone()
        except sqlite3.Error:
            return None
        self.gone_count = int(total) - self.matched
        return self.changed + self.gone_count

    def gone(self, present: set[str]) -> list[str] | None:
        """The index's memories not in `present` (after `behind`); None when the index cannot be read."""
        if self.conn is None:
            return None
        if not self.gone_count:
            return []
        try:
            rows = self.conn.execute("SELECT vpath FROM docs").fetchall()
        except sqlite3.Error:
            return None
        return [vpath for (vpath,) in rows if vpath not in present]

    def total(self) -> int | None:
        """How many memories the index holds; None when it cannot be read."""
        if self.conn is None:
            return None
        try:
            return int(self.conn.execute("SELECT count(*) FROM docs").fetchone()[0])
        except sqlite3.Error:
            return None

    def gone_from(self, sealed: set[int], listed: dict[int, set[str]]) -> list[str] | None:
        """The index's memories whose file is gone, from what the start-up workers told of the store:
        a segment whose seal matched holds exactly its files; any other segment's rows are gone unless
        `listed` (its files) has them. None when the index cannot be read. Counts nothing."""
        from ..caches.segments import segment_of

        if self.conn is None:
            return None
        try:
            rows = self.conn.execute("SELECT vpath FROM docs").fetchall()
        except sqlite3.Error:
            return None
        empty: set[str] = set()
        gone = []
        for (vpath,) in rows:
            seg = segment_of(vpath)
            if seg not in sealed and vpath not in listed.get(seg, empty):
                gone.append(vpath)
        return gone

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def stamps_below(root: Path | str, vprefix: str) -> dict[str, tuple[int, str | None, str | None]] | None:
    """What the index knows of the stamp of each memory at or below the virtual folder `vprefix`: vpath →
    (freshness key, workspace, scope) (see records.scope_of: scope None is a stamp no workspace matches).
    A range over the vpath index, not a pass over the documents. None when there is no usable index."""
    sql = "SELECT vpath, key, workspace, scope FROM docs WHERE vpath >= ? AND vpath < ?"
    rows = _asked(root, lambda c: c.execute(sql, _below(vprefix)).fetchall())
    return None if rows is None else {v: (k, w, s) for v, k, w, s in rows}


def mentioning(root: Path | str, text: str) -> tuple[set[str], dict[str, tuple[int, int, str]]] | None:
    """(the memories whose indexed body holds the words of `text` as a phrase, every memory the index
    holds → (freshness key, size, category)); None when there is no usable index. The phrase is a
    superset of the exact text (punctuation is not indexed); a caller reads only those, and the files
    the index did not see as they are."""
    phrase = '"' + text.replace('"', '""') + '"'
    hits_sql = "SELECT d.vpath FROM fts f JOIN docs d ON d.id = f.rowid WHERE fts MATCH ?"

    def ask(c: sqlite3.Connection) -> tuple[set[str], dict[str, tuple[int, int, str]]]:
        hits = c.execute(hits_sql, (f"body : {phrase}",)).fetchall()
        rows = c.execute("SELECT vpath, key, size, category FROM docs").fetchall()
        return {v for (v,) in hits}, {v: (k, s, cat) for v, k, s, cat in rows}

    return _asked(root, ask)


def naming(root: Path | str, old: str) -> tuple[set[str], set[str]] | None:
    """(the memories whose references name `old` or a path below it, the memories whose references the
    index does not know): two index lookups, whatever the store's size. None when there is no usable
    index or it keeps no references yet (an earlier build made it)."""
    named_sql = (
        "SELECT DISTINCT d.vpath FROM refs r JOIN docs d ON d.id = r.id "
        "WHERE r.target = ? OR (r.target >= ? AND r.target < ?)"
    )

    def ask(c: sqlite3.Connection) -> tuple[set[str], set[str]]:
        named = c.execute(named_sql, (old, *_below(old))).fetchall()
        unknown = c.execute("SELECT vpath FROM docs WHERE refs_read = 0").fetchall()
        return {v for (v,) in named}, {v for (v,) in unknown}

    return _asked(root, ask)


def listed_docs(
    root: Path | str,
) -> list[tuple[str, int, str, str, str | None, str | None, float, int]] | None:
    """Every memory the index holds as a listing needs it: (vpath, freshness key, title, category,
    workspace, scope, mtime, size); None when there is no usable index."""
    sql = "SELECT vpath, key, title, category, workspace, scope, mtime, size FROM docs"
    return _asked(root, lambda c: c.execute(sql).fetchall())


def scopes_below(root: Path | str, folder: str) -> list[str]:
    """The distinct path stamps the index holds that name a folder below `folder` (a range over the scope
    index); [] when there is no usable index."""
    sql = "SELECT DISTINCT scope FROM docs WHERE scope >= ? AND scope < ?"
    rows = _asked(root, lambda c: c.execute(sql, _below(folder)).fetchall()) or []
    return [s for (s,) in rows if isinstance(s, str)]


def index_signature(root: Path | str) -> tuple[tuple[int, int, int] | None, ...] | None:
    """What says the index's rows may have changed: its database and write-ahead log as a stat sees them
    (not the ctime: opening the index read-only touches the log's, as SQLite resets it); None when there
    is no index file."""
    out: list[tuple[int, int, int] | None] = []
    for suffix in DB_SUFFIXES[:2]:
        try:
            st = (Path(root) / HIDDEN_DIR / (DB_NAME + suffix)).stat()
        except OSError:
            out.append(None)
            continue
        out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return None if out[0] is None else tuple(out)
