"""The recall index's vocabulary snapshot: how many memories hold each word, kept in memory and saved.

Ranking weighs each query word by how many memories hold it. Counting a word's documents in FTS5 costs
about 0.1 ms for a common word, so queries read a snapshot of the whole vocabulary instead (one pass over
the full-text index: tens of milliseconds at 10k memories, over a second at 100k), refreshed by the index
writer after its writes, at most every DF_REFRESH seconds: a slightly stale count ranks just as well.

The snapshot is saved in the index (`vocab_saved`, with the write generation it was read at, see
recall/schema.py) so that a start reads one row instead of that pass. A saved copy is used while it is
at most SAVED_BEHIND documents behind the index, or one in SAVED_SHARE of the index when that is more:
a query word missing from it is looked up in the index itself, never "fixed" as a typo; a copy far
behind would skew the counts. A damaged copy is never used.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

log = logging.getLogger("kin_memory.recall")
DF_REFRESH = 30.0  # seconds between re-reads of a snapshot that writes made stale
SAVED_BEHIND = 64
SAVED_SHARE = 10

T = TypeVar("T")
_Read = tuple[int | None, list[tuple[str, int]]]
_Saved = tuple[int | None, tuple | None, int]
_NOTHING_SAVED: _Saved = (None, None, 0)


def count_written(c: sqlite3.Connection, docs: int) -> None:
    """Within a write transaction: `docs` documents were written or removed (the generation moves)."""
    try:
        c.execute("UPDATE vocab_gen SET n = n + ?", (max(docs, 1),))
    except sqlite3.OperationalError:  # an index not upgraded yet: no saved vocabulary to keep in step
        pass


def generation(c: sqlite3.Connection) -> int | None:
    try:
        row = c.execute("SELECT n FROM vocab_gen").fetchone()
    except sqlite3.OperationalError:  # an index without the table (read-only, before it was added)
        return None
    return row[0] if row and isinstance(row[0], int) else None


def saved_vocab(row: tuple | None, now: int | None, behind: int) -> dict[str, int] | None:
    """The saved vocabulary of `row` (gen, data) when it is whole and at most `behind` documents behind
    the index's generation `now`, else None."""
    if row is None or now is None or not isinstance(row[0], int) or not isinstance(row[1], bytes):
        return None
    if not 0 <= now - row[0] <= behind:
        return None
    df: dict[str, int] = {}
    try:
        for line in row[1].decode("utf-8", "surrogatepass").split("\n") if row[1] else ():
            term, n = line.split("\t")
            if not term or not n.isdigit():
                return None
            df[term] = int(n)
    except (UnicodeDecodeError, ValueError):
        return None
    return df


class IndexDatabase(Protocol):
    """What the snapshot needs of the index's database (recall/database.py; caches sit below recall)."""

    on_wipe: Callable[[], None] | None  # set here: a wiped database drops the snapshot

    @property
    def lock(self) -> AbstractContextManager[Any]: ...

    @property
    def unavailable(self) -> type[Exception]:
        """What the database raises when it cannot be used now: a save or a load just gives up."""
        ...

    def run(self, fn: Callable[[sqlite3.Connection], T], refused: T) -> T: ...

    def transaction(self, fn: Callable[[sqlite3.Connection], None]) -> None: ...


class Vocabulary:
    """The snapshot of one index. Queries read it (`snapshot`, `frequencies`) and never wait for a
    refresh; the writer refreshes it (`refresh`); a write marks it stale (`written`)."""

    def __init__(self, db: IndexDatabase) -> None:
        self.db = db
        self._lock = db.lock  # the database's: a rebuild and a swap never interleave
        self.df: dict[str, int] | None = None
        self.terms: list[str] = []  # df's words, sorted (typo and prefix look-ups walk them)
        self._read_at = 0.0
        self.dirty = False
        self._written_at = 0.0  # when the last write committed (a snapshot read before it is stale)
        self._reading = threading.Lock()  # one vocabulary read at a time
        db.on_wipe = self.forget

    def forget(self) -> None:
        self.df = None

    def written(self) -> None:
        """A write that changed documents committed: the snapshot is stale."""
        self.dirty = True
        self._written_at = time.monotonic()

    def frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        """How many memories contain each term: from the snapshot, a word it lacks from the index."""
        df = self.snapshot()[0]
        out = {}
        for t in dict.fromkeys(terms):
            n = df.get(t)
            if n is None:
                n = df[t] = self.count_of(t)
            out[t] = n
        return out

    def count_of(self, term: str) -> int:
        row = self.db.run(lambda c: c.execute("SELECT doc FROM vocab WHERE term=?", (term,)).fetchone(), None)
        return row[0] if row else 0

    def snapshot(self) -> tuple[dict[str, int], list[str]]:
        """The snapshot as it is, (counts, sorted words) of one reading: a query never waits for a refresh,
        only the very first one when nobody warmed it (the saved copy, when recent enough, else a read)."""
        if self.df is None:
            with self._reading:  # the writer may be reading it now: wait for that one
                if self.df is None and not self.load_saved():
                    self._read()
        with self._lock:  # the pair of one snapshot (a refresh swaps both)
            df, terms = self.df, self.terms
        assert df is not None
        return df, terms

    def refresh(self, *, force: bool = False) -> None:
        """Re-read the snapshot when writes made it stale (at most every DF_REFRESH seconds), and save what
        was read: for the index writer to call after its writes, off every query's path. The first time,
        the saved copy stands in while the index is read again (if it is behind)."""
        with self._reading:
            if self.df is None and self.load_saved() and not self.dirty:
                return
            with self._lock:
                stale = self.df is None or (self.dirty and time.monotonic() - self._read_at > DF_REFRESH)
            if force or stale:
                gen = self._read()
                if gen is not None:
                    self._save(gen)

    def _read(self) -> int | None:
        """Read and sort outside the lock (queries keep the old snapshot meanwhile), then swap; the
        generation it was read at (None when the index could not tell). Called holding `_reading`."""
        started = time.monotonic()

        def read(c: sqlite3.Connection) -> _Read:
            c.execute("BEGIN")  # the generation and the vocabulary of one snapshot
            try:
                return generation(c), c.execute("SELECT term, doc FROM vocab").fetchall()
            finally:
                c.execute("COMMIT")

        nothing: _Read = (None, [])
        gen, rows = self.db.run(read, nothing)
        df = dict(rows)
        terms = sorted(df)  # the vocabulary reads in order: sorting it is a pass
        with self._lock:
            self.df, self.terms = df, terms
            self._read_at = started
            if self._read_at >= self._written_at:
                self.dirty = False
        return gen

    def _save(self, gen: int) -> None:
        with self._lock:
            df = self.df
        if df is None:
            return
        data = "\n".join(f"{term}\t{n}" for term, n in df.items()).encode("utf-8", "surrogatepass")

        def save(c: sqlite3.Connection) -> None:
            c.execute("INSERT OR REPLACE INTO vocab_saved VALUES (1, ?, ?)", (gen, data))

        try:
            self.db.transaction(save)
        except (sqlite3.Error, self.db.unavailable) as exc:  # only a slower next start
            log.info("recall vocabulary not saved: %r", exc)

    def load_saved(self) -> bool:
        """The saved vocabulary as the snapshot, when it is not too far behind the index (then marked
        stale: the writer reads it again). Whether it was used."""

        def read(c: sqlite3.Connection) -> _Saved:
            c.execute("BEGIN")
            try:
                docs = c.execute("SELECT count(*) FROM docs").fetchone()[0]
                return generation(c), c.execute("SELECT gen, data FROM vocab_saved").fetchone(), docs
            finally:
                c.execute("COMMIT")

        try:
            now, row, docs = self.db.run(read, _NOTHING_SAVED)
        except (sqlite3.Error, self.db.unavailable):
            return False
        df = saved_vocab(row, now, max(SAVED_BEHIND, docs // SAVED_SHARE))
        if df is None or now is None or row is None:
            return False
        with self._lock:
            self.df, self.terms = df, sorted(df)
            self._read_at = float("-inf") if row[0] != now else time.monotonic()
            self.dirty = row[0] != now
        return True
