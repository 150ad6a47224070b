"""Every write to the recall index: a memory's rows written or removed, a sync with the files, seals.

`_put` is the one place a memory's rows are written (its `docs` row and, unless it is a session memory,
its full-text row): whatever else the index comes to keep per memory is written there too. A memory is
judged unchanged by the one freshness rule (store/freshness.py): the key its row was made from against
the file's key now.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..caches.recall_seals import seal_missing, unseal
from ..caches.recall_vocab import Vocabulary, count_written
from ..store.freshness import UNSURE, Key, unchanged
from .database import Database
from .records import RecallDoc, path_text


@dataclass(frozen=True)
class SyncStats:
    files: int  # memories on disk
    read: int  # files (re)read because they were new or changed
    removed: int
    seconds: float


class Writer:
    def __init__(self, db: Database, vocab: Vocabulary) -> None:
        self.db = db
        self.vocab = vocab

    def known(self) -> dict[str, Key]:
        """Each indexed memory's freshness key; UNSURE for a row whose references are not known yet (one
        an earlier build wrote), so a sync reads its file again once (its row and vector are kept)."""
        rows: list[tuple[str, Key]] = self.db.run(
            lambda c: c.execute(
                f"SELECT vpath, CASE WHEN refs_read THEN key ELSE {UNSURE} END FROM docs"
            ).fetchall(),
            [],
        )
        return dict(rows)

    def _write(self, fn: Callable[[sqlite3.Connection], None], docs: int) -> None:
        """fn, which writes or removes `docs` documents, in one transaction with the generation count
        the saved vocabulary is judged by; the vocabulary snapshot is stale after it."""

        def counted(c: sqlite3.Connection) -> None:
            fn(c)
            count_written(c, docs)

        self.db.transaction(counted)
        self.vocab.written()

    def upsert(self, docs: Iterable[RecallDoc]) -> int:
        batch = list(docs)

        def fn(c: sqlite3.Connection) -> None:
            unseal(c, (d.vpath for d in batch))
            for d in batch:
                if not _kept_row(c, d):
                    _delete(c, d.vpath)
                    _put(c, d)

        if batch:
            self._write(fn, len(batch))
        return len(batch)

    def remove(self, vpaths: Iterable[str]) -> int:
        batch = list(vpaths)

        def fn(c: sqlite3.Connection) -> None:
            unseal(c, batch)
            for v in batch:
                _delete(c, v)

        if batch:
            self._write(fn, len(batch))
        return len(batch)

    def sync(
        self,
        stats: Mapping[str, Key],
        load: Callable[[str], RecallDoc | None],
        *,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        chunk: int = 2000,
    ) -> SyncStats:
        """Bring the index in line with stats {vpath: freshness key}, loading only new or changed files.
        Committed in chunks, so progress shows and a cancelled or killed sync keeps what it did."""
        start = time.perf_counter()
        if not self.db.available():  # refused: reading every file for an index that keeps nothing is waste
            return SyncStats(len(stats), 0, 0, time.perf_counter() - start)
        known = self.known()
        gone = [v for v in known if v not in stats]
        changed = [v for v, key in stats.items() if not unchanged(known.get(v), key)]
        self.remove(gone)
        done = 0
        for i in range(0, len(changed), chunk):
            if cancelled is not None and cancelled():
                break
            part = changed[i : i + chunk]
            self._load_part(part, load)
            done += len(part)
            if progress is not None:
                progress(done, len(changed))
        return SyncStats(len(stats), done, len(gone), time.perf_counter() - start)

    def _load_part(self, vpaths: list[str], load: Callable[[str], RecallDoc | None]) -> None:
        """One chunk of a sync: each file loaded and written, or removed when it cannot be loaded."""
        docs = []
        for v in vpaths:
            doc = load(v)
            if doc is None:
                self.remove([v])
            else:
                docs.append(doc)
        self.upsert(docs)

    def seal(self) -> int:
        """Seal the segments that lost theirs (caches/recall_seals.py), in one transaction with the
        writes so nothing changes in between. How many were sealed."""
        sealed = 0

        def fn(c: sqlite3.Connection) -> None:
            nonlocal sealed
            sealed = seal_missing(c)

        self.db.transaction(fn)  # no document changes: the vocabulary stays as it is
        return sealed

    def clear(self) -> None:
        self.db.clear()


def _kept_row(c: sqlite3.Connection, d: RecallDoc) -> bool:
    """A memory written again with the same text and place (a buffer opened, a save that changed
    nothing the index holds) keeps its row, so its sentence vector stays and is not embedded again:
    only the row's freshness is updated. Whether it did."""
    row = c.execute(
        "SELECT d.id, d.title, d.category, d.workspace, d.scope, f.body FROM docs d "
        "LEFT JOIN fts f ON f.rowid = d.id WHERE d.vpath = ?",
        (d.vpath,),
    ).fetchone()
    if row is None or tuple(row[1:5]) != (d.title, d.category, d.workspace, d.scope):
        return False
    if (row[5] is not None) != d.indexed or (d.indexed and row[5] != d.body):
        return False
    c.execute("UPDATE docs SET mtime = ?, size = ?, key = ? WHERE id = ?", (d.mtime, d.size, d.key, row[0]))
    c.execute("DELETE FROM refs WHERE id = ?", (row[0],))  # past the body's cap they may have changed
    _put_refs(c, row[0], d)
    return True


def _delete(c: sqlite3.Connection, vpath: str) -> None:
    row = c.execute("SELECT id FROM docs WHERE vpath=?", (vpath,)).fetchone()
    if row:
        c.execute("DELETE FROM fts WHERE rowid=?", row)
        c.execute("DELETE FROM docs WHERE id=?", row)


def _put(c: sqlite3.Connection, d: RecallDoc) -> None:
    """A memory's rows (none of it may be in the index: see `_delete`)."""
    cur = c.execute(
        "INSERT INTO docs(vpath,title,category,workspace,scope,mtime,size,key) VALUES(?,?,?,?,?,?,?,?)",
        (d.vpath, d.title, d.category, d.workspace, d.scope, d.mtime, d.size, d.key),
    )
    if d.indexed:
        c.execute(
            "INSERT INTO fts(rowid,path,title,body) VALUES(?,?,?,?)",
            (cur.lastrowid, path_text(d.vpath), d.title, d.body),
        )
    _put_refs(c, cur.lastrowid, d)


def _put_refs(c: sqlite3.Connection, doc_id: int | None, d: RecallDoc) -> None:
    """The memory's references, then the mark that says they are known (after them: a `key` update by any
    writer clears the mark, see schema.REFS_TABLES)."""
    if d.refs is None:
        return
    c.executemany("INSERT INTO refs(id, target) VALUES(?, ?)", [(doc_id, t) for t in sorted(d.refs)])
    c.execute("UPDATE docs SET refs_read = 1 WHERE id = ?", (doc_id,))
