"""The persistent recall index: SQLite FTS5 in the store's hidden folder.

One row per memory in `docs` (virtual path, title, category, workspace stamp, the scope the workspace
filter compares, mtime, size) and, except for session memories, one row in the FTS5 table `fts` (path,
title, body). `docs` is what a warm restart compares against the disk by (mtime, size), so an unchanged
store is re-read for nothing. The database is a cache: when it is corrupt, of another schema version,
deleted or replaced underneath us, it is rebuilt from the files with a log line, never a crash.

The hidden folder (or the database file) being a symbolic link is another matter: following it would
write the database, and wipe files on a rebuild, wherever the link points. Then the index refuses: one
log line, every query answers nothing, every write is skipped, and the server keeps serving; as soon as
the folder is a real folder again the index is rebuilt there.

Each thread uses its own connection (WAL: readers never wait for the writer).

A query is a person's turn to the agent as often as a keyword list: terms.py turns its words into terms
(stop words dropped, word forms, shorthand, a one-typo fix, all looked up in a snapshot of the `vocab`
table), FTS5 gathers candidates, scoring.py ranks them, and a floor keeps weak matches out.
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..store.freshness import unchanged
from ..store.paths import (
    HIDDEN_DIR,
    HiddenRefused,
    hidden_file_problem,
    is_transient,
    open_hidden_dir,
    use_wal,
)
from ..store.workspace import GLOBAL
from .peek import DB_NAME, DB_SUFFIXES, SCHEMA_VERSION
from .query import Phrase, match_expr, phrases
from .records import RecallDoc, path_text
from .scoring import Candidate, Floor, Scored, score
from .terms import Lexicon, Term, content_words, is_content, with_multiword
from .words import STOP_WORDS

log = logging.getLogger("kin_memory.recall")
BUSY_TIMEOUT = 5.0  # seconds a connection waits for another process's lock
CONNECT_TRIES = 12  # connections tried when the database answers "not now" (about 1.5 s in all)

T = TypeVar("T")

WEIGHTS = (6.0, 4.0, 1.0)  # bm25 column weights: path, title, body
PREFERENCE_HALF_LIFE_DAYS = 90.0
PREFERENCE_TIE = 0.05  # a new preference passes a memory scoring up to 5% more, an old one hardly
AND_FIRST_TERMS = 4  # a longer query (a hover's paragraph) seldom has a pool of memories holding it all
RERANK_ROOM = 10  # candidates past the limit that are scored too: FTS5's order is only a first guess
COMMON_SHARE = 0.02  # a term in more than 2% of memories says little about what is related
MAX_RELATED_TERMS = 24
MIN_COMMON = 50  # in a small store no word is too common to relate memories
DF_REFRESH = 30.0
BROAD = 2000  # matches beyond which a query is ranked over the most recent (see _ranked)

_SCHEMA = """
CREATE TABLE docs(
  id INTEGER PRIMARY KEY,
  vpath TEXT UNIQUE NOT NULL,
  title TEXT NOT NULL,
  category TEXT NOT NULL,
  workspace TEXT,
  scope TEXT,
  mtime REAL NOT NULL,
  size INTEGER NOT NULL,
  key INTEGER NOT NULL
);
CREATE INDEX docs_scope ON docs(scope);
CREATE VIRTUAL TABLE fts USING fts5(path, title, body, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row');
CREATE TABLE seal(seg INTEGER PRIMARY KEY, listing BLOB NOT NULL);
CREATE TABLE vocab_gen(one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL);
INSERT INTO vocab_gen VALUES (1, 0);
CREATE TABLE vocab_saved(one INTEGER PRIMARY KEY CHECK (one = 1), gen INTEGER NOT NULL, data BLOB NOT NULL);
"""
# `seal`: per segment of the store's files (caches/segments.py), the digest of what `docs` holds of
# it (vpath, freshness key), kept by sealed() and dropped by any write to that segment. A start compares
# it with the files' own digests: a segment that matches needs no look at its rows.
_SEAL = "CREATE TABLE IF NOT EXISTS seal(seg INTEGER PRIMARY KEY, listing BLOB NOT NULL)"
# `vocab_gen`: documents written or removed since the index was made (every text write adds its count).
# `vocab_saved`: the vocabulary (term, memories holding it) as read at generation `gen`. Reading it from
# FTS5 means a pass over the whole full-text index (over a second at 100k memories, at every start);
# the saved copy is one row, and a copy a few writes behind ranks just as well until it is read again.
_VOCAB_TABLES = (
    "CREATE TABLE IF NOT EXISTS vocab_gen(one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO vocab_gen VALUES (1, 0)",
    "CREATE TABLE IF NOT EXISTS vocab_saved(one INTEGER PRIMARY KEY CHECK (one = 1), gen INTEGER NOT NULL, "
    "data BLOB NOT NULL)",
)
# Documents written since a saved vocabulary was read, at most, for it to be used: SAVED_BEHIND, or one in
# SAVED_SHARE of the index when that is more. A copy a little behind ranks as well (a query word missing
# from it is looked up in the index itself, never "fixed" as a typo); one far behind would skew the counts.
SAVED_BEHIND = 64
SAVED_SHARE = 10


@dataclass(frozen=True)
class Hit:
    vpath: str
    title: str
    category: str
    workspace: str | None
    body: str  # capped body, for snippets and duplicate checks
    score: float  # higher is better
    mtime: float


@dataclass(frozen=True)
class SyncStats:
    files: int  # memories on disk
    read: int  # files (re)read because they were new or changed
    removed: int
    seconds: float


class IndexUnavailable(Exception):
    """The database cannot be opened even after a rebuild (e.g. the store is read-only)."""


class IndexRefused(IndexUnavailable):
    """The hidden folder or the database is a link (or not what it should be): the index is not used."""


class RecallIndex:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.dir = self.root / HIDDEN_DIR
        self.path = self.dir / DB_NAME
        self._local = threading.local()
        self._lock = threading.RLock()
        self.rebuilds = 0
        self.on_reset: Callable[[], None] | None = None  # called when the database had to start empty
        self._created = False
        self._known_once = False  # the first database of a run starts empty by design: no reset then
        self._count_cache: tuple[int, float] | None = None
        self._df: dict[str, int] | None = None
        self._terms: list[str] = []
        self._df_time = 0.0
        self._df_dirty = False
        self._written_at = 0.0  # when the last write committed (a snapshot read before it is stale)
        self._vocab_reading = threading.Lock()  # one vocabulary read at a time
        self.refused: str | None = None  # why the index is off (a planted link), None when usable

    # -- connections ---------------------------------------------------------------------------
    def _check_place(self) -> None:
        """HiddenRefused unless the hidden folder is a real folder (made when missing; never the root:
        a vanished store is not recreated by its cache) and the database files in it are no links.
        SQLite opens by name, so this is checked right before each connection is made."""
        os.close(open_hidden_dir(self.root, create=True))
        for suffix in DB_SUFFIXES:
            problem = hidden_file_problem(self.root, DB_NAME + suffix)
            if problem is not None:
                raise HiddenRefused(problem)

    def _refuse(self, reason: str) -> IndexRefused:
        """Turn the index off (logged once per reason) and drop this thread's connection."""
        self._drop_local()
        if self.refused != reason:
            self.refused = reason
            log.warning("recall index off: %s; search and recall answer nothing until it is fixed", reason)
        return IndexRefused(reason)

    def _connect(self) -> sqlite3.Connection:
        self._check_place()
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False, isolation_level=None)
        try:
            use_wal(conn)
            version, tables = _schema_state(conn)
            if version == 0 and not tables:  # new: create it, unless another connection just did
                self._created = _create_schema(conn)
                version, tables = _schema_state(conn)
            if version != SCHEMA_VERSION or not {"docs", "fts", "vocab"} <= tables:
                raise sqlite3.DatabaseError(f"schema version {version}, this version uses {SCHEMA_VERSION}")
            else:
                conn.execute("SELECT count(*) FROM docs").fetchone()
                conn.execute("SELECT rowid FROM fts LIMIT 1").fetchall()
                _upgrade(conn, tables)
        except BaseException:
            conn.close()
            raise
        try:
            os.chmod(self.path, 0o600)
        except OSError:
            pass
        return conn

    def _inode(self) -> int | None:
        try:  # the entry itself: a database replaced by a link reads as replaced
            return os.lstat(self.path).st_ino
        except OSError:
            return None

    def _wipe(self) -> None:
        """Remove the database files, inside the real hidden folder only (never through a link)."""
        try:
            dir_fd = open_hidden_dir(self.root)
        except OSError:  # missing (nothing to wipe) or refused (nothing of ours is there)
            return
        try:
            for suffix in DB_SUFFIXES:
                try:
                    os.unlink(DB_NAME + suffix, dir_fd=dir_fd)
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    log.warning("recall index: cannot remove %s%s: %s", DB_NAME, suffix, exc)
        finally:
            os.close(dir_fd)

    def _drop_local(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:
                pass

    def _rebuild(self, reason: object) -> sqlite3.Connection:
        log.warning("recall index unusable (%s): rebuilding it from the files", reason)
        self.rebuilds += 1
        self._df = None
        self._drop_local()
        self._wipe()
        try:
            conn = self._connect()
        except HiddenRefused as exc:
            raise self._refuse(exc.reason) from None
        except (sqlite3.Error, OSError) as exc:
            raise IndexUnavailable(str(exc)) from exc
        self._local.conn = conn
        self._local.ino = self._inode()
        self._known_once = True
        if self.on_reset is not None:
            self.on_reset()
        self._created = False
        return conn

    def _connect_patiently(self) -> sqlite3.Connection:
        """A connection, tried again for a while when the database says "not now": some of SQLite's lock
        waits (a database being made or recovered by another connection) answer at once instead of
        waiting out the busy timeout."""
        for attempt in range(CONNECT_TRIES):
            try:
                return self._connect()
            except sqlite3.Error as exc:
                if not is_transient(exc) or attempt == CONNECT_TRIES - 1:
                    raise
            time.sleep(0.02 * (attempt + 1))
        raise AssertionError("unreachable")

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and self._local.ino == self._inode():
            return conn
        with self._lock:
            if conn is not None:  # the file was deleted or replaced underneath this connection
                self._drop_local()
            try:
                conn = self._connect_patiently()
            except HiddenRefused as exc:
                raise self._refuse(exc.reason) from None
            except (sqlite3.Error, OSError) as exc:
                if is_transient(exc):  # locked by another process (or a full disk): not ours to wipe
                    raise IndexUnavailable(str(exc)) from exc
                return self._rebuild(exc)
            self._local.conn = conn
            self._local.ino = self._inode()
            if self.refused is not None:
                log.warning("recall index back on: %s is a real folder again", HIDDEN_DIR)
                self.refused = None
                self._known_once = True  # what was skipped while refused is refilled (on_reset)
        self._notify_reset()
        return conn

    def _notify_reset(self) -> None:
        """A fresh, empty database replaced the one we knew (first use, deleted, rebuilt): the owner
        refills it from the files (on_reset), outside our locks."""
        if self._created:
            self._created = False
            if self.on_reset is not None and self._known_once:
                self.on_reset()
        self._known_once = True

    def available(self) -> bool:
        """Whether the index can be used (False while its folder is refused)."""
        try:
            self._conn()
        except IndexRefused:
            return False
        return True

    def _run(self, fn: Callable[[sqlite3.Connection], T], refused: T) -> T:
        """fn on this thread's connection; a corrupt database is rebuilt and fn retried once. A database
        locked by another live process is not corruption: that error propagates. While the index is
        refused (a planted link) the answer is `refused`: nothing is read or written."""
        try:
            conn = self._conn()
        except IndexRefused:
            return refused
        try:
            return fn(conn)
        except sqlite3.DatabaseError as exc:
            if is_transient(exc):  # a database locked by another live process, a full disk: not corrupt
                raise
            if conn.in_transaction:
                try:
                    conn.rollback()
                except sqlite3.Error:
                    pass
            with self._lock:
                try:
                    conn = self._rebuild(exc)
                except IndexRefused:
                    return refused
            return fn(conn)

    def close(self) -> None:
        self._drop_local()

    # -- writes --------------------------------------------------------------------------------
    def known(self) -> dict[str, int]:
        """Each indexed memory's freshness key."""
        rows: list[tuple[str, int]] = self._run(
            lambda c: c.execute("SELECT vpath, key FROM docs").fetchall(), []
        )
        return dict(rows)

    def count(self) -> int:
        """Memories in the full-text table (session memories are recorded in docs only)."""
        return int(self._run(lambda c: c.execute("SELECT count(*) FROM fts").fetchone()[0], 0))

    @staticmethod
    def _delete(c: sqlite3.Connection, vpath: str) -> None:
        row = c.execute("SELECT id FROM docs WHERE vpath=?", (vpath,)).fetchone()
        if row:
            c.execute("DELETE FROM fts WHERE rowid=?", row)
            c.execute("DELETE FROM docs WHERE id=?", row)

    def _write(self, fn: Callable[[sqlite3.Connection], None], *, text: bool = True, docs: int = 0) -> None:
        """Run `fn` in a write transaction; `text` False: it changes no document (the vocabulary
        snapshot stays current). `docs`: how many documents it writes or removes."""

        def tx(c: sqlite3.Connection) -> None:
            c.execute("BEGIN IMMEDIATE")
            try:
                fn(c)
                if text:
                    _count_written(c, docs)
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")

        self._run(tx, None)
        if text:
            self._df_dirty = True
            self._written_at = time.monotonic()

    def upsert(self, docs: Iterable[RecallDoc]) -> int:
        batch = list(docs)

        def fn(c: sqlite3.Connection) -> None:
            _unseal(c, (d.vpath for d in batch))
            for d in batch:
                self._delete(c, d.vpath)
                cur = c.execute(
                    "INSERT INTO docs(vpath,title,category,workspace,scope,mtime,size,key) VALUES(?,?,?,?,?,?,?,?)",
                    (d.vpath, d.title, d.category, d.workspace, d.scope, d.mtime, d.size, d.key),
                )
                if d.indexed:
                    c.execute(
                        "INSERT INTO fts(rowid,path,title,body) VALUES(?,?,?,?)",
                        (cur.lastrowid, path_text(d.vpath), d.title, d.body),
                    )

        if batch:
            self._write(fn, docs=len(batch))
        return len(batch)

    def remove(self, vpaths: Iterable[str]) -> int:
        batch = list(vpaths)

        def fn(c: sqlite3.Connection) -> None:
            _unseal(c, batch)
            for v in batch:
                self._delete(c, v)

        if batch:
            self._write(fn, docs=len(batch))
        return len(batch)

    def sync(
        self,
        stats: Mapping[str, int],
        load: Callable[[str], RecallDoc | None],
        *,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        chunk: int = 2000,
    ) -> SyncStats:
        """Bring the index in line with stats {vpath: freshness key}, loading only new or changed files.
        Committed in chunks, so progress shows and a cancelled or killed sync keeps what it did."""
        start = time.perf_counter()
        if not self.available():  # refused: reading every file for an index that keeps nothing is waste
            return SyncStats(len(stats), 0, 0, time.perf_counter() - start)
        known = self.known()
        gone = [v for v in known if v not in stats]
        changed = [v for v, key in stats.items() if not unchanged(known.get(v), key)]
        self.remove(gone)
        done = 0
        for i in range(0, len(changed), chunk):
            if cancelled is not None and cancelled():
                break
            docs = []
            for v in changed[i : i + chunk]:
                doc = load(v)
                if doc is None:
                    self.remove([v])
                else:
                    docs.append(doc)
            self.upsert(docs)
            done += len(changed[i : i + chunk])
            if progress is not None:
                progress(done, len(changed))
        return SyncStats(len(stats), done, len(gone), time.perf_counter() - start)

    def seal(self) -> int:
        """Seal the segments that lost theirs (see `seal` in the schema): one pass over `docs`, in one
        transaction with the writes so nothing changes in between. How many were sealed."""
        from ..caches.segments import SEGMENTS, listing_digest, segment_of

        sealed = 0

        def fn(c: sqlite3.Connection) -> None:
            nonlocal sealed
            have = {seg for (seg,) in c.execute("SELECT seg FROM seal")}
            if len(have) >= SEGMENTS:
                return
            parts: dict[int, list[tuple[str, int]]] = {s: [] for s in range(SEGMENTS) if s not in have}
            for vpath, key in c.execute("SELECT vpath, key FROM docs"):
                part = parts.get(segment_of(vpath))
                if part is not None:
                    part.append((vpath, key))
            c.executemany(
                "INSERT INTO seal VALUES (?, ?)", ((s, listing_digest(p)) for s, p in parts.items())
            )
            sealed = len(parts)

        self._write(fn, text=False)
        return sealed

    def clear(self) -> None:
        with self._lock:
            self._drop_local()
            self._wipe()
            self._df = None

    # -- reads ---------------------------------------------------------------------------------
    def doc_frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        """How many memories contain each term. Read from a snapshot of the whole vocabulary (one
        pass over the index, tens of milliseconds at 10k) rather than term by term (counting a
        common term's documents costs ~0.1 ms each); the snapshot is refreshed after writes, at most
        every DF_REFRESH seconds: a slightly stale count ranks just as well."""
        df = self._df_snapshot()
        out = {}
        for t in dict.fromkeys(terms):
            n = df.get(t)
            if n is None:
                n = df[t] = self._df_of(t)
            out[t] = n
        return out

    def _df_snapshot(self) -> dict[str, int]:
        """The snapshot as it is: a query never waits for a refresh (at 100k memories reading and sorting
        the vocabulary takes most of a second), only for the very first one when nobody warmed it (the
        saved copy, when it is recent enough, else a read)."""
        df = self._df
        if df is None:
            with self._vocab_reading:  # the writer may be reading it now: wait for that one
                if self._df is None and not self._load_saved_vocab():
                    self._read_vocab_unlocked()
            df = self._df
        assert df is not None
        return df

    def refresh_vocab(self, *, force: bool = False) -> None:
        """Re-read the vocabulary snapshot when writes made it stale (at most every DF_REFRESH seconds),
        and save what was read: for the index writer to call after its writes, off every query's path.
        The first time, the saved copy stands in while the index is read again (if it is behind)."""
        with self._vocab_reading:
            if self._df is None and self._load_saved_vocab() and not self._df_dirty:
                return
            with self._lock:
                stale = self._df is None or (self._df_dirty and time.monotonic() - self._df_time > DF_REFRESH)
            if force or stale:
                gen = self._read_vocab_unlocked()
                if gen is not None:
                    self._save_vocab(gen)

    def _read_vocab(self) -> None:
        with self._vocab_reading:
            self._read_vocab_unlocked()

    def _read_vocab_unlocked(self) -> int | None:
        """Read and sort outside the lock (queries keep the old snapshot meanwhile), then swap; the
        generation it was read at (None when the index could not tell)."""
        started = time.monotonic()

        def read(c: sqlite3.Connection) -> tuple[int | None, list[tuple[str, int]]]:
            c.execute("BEGIN")  # the generation and the vocabulary of one snapshot
            try:
                return _generation(c), c.execute("SELECT term, doc FROM vocab").fetchall()
            finally:
                c.execute("COMMIT")

        nothing: tuple[int | None, list[tuple[str, int]]] = (None, [])
        gen, rows = self._run(read, nothing)
        df = dict(rows)
        terms = sorted(df)  # the vocabulary reads in order: sorting it is a pass
        with self._lock:
            self._df, self._terms = df, terms
            self._df_time = started
            if self._df_time >= self._written_at:
                self._df_dirty = False
        return gen

    def _save_vocab(self, gen: int) -> None:
        with self._lock:
            df = self._df
        if df is None:
            return
        data = "\n".join(f"{term}\t{n}" for term, n in df.items()).encode("utf-8", "surrogatepass")

        def save(c: sqlite3.Connection) -> None:
            c.execute("INSERT OR REPLACE INTO vocab_saved VALUES (1, ?, ?)", (gen, data))

        try:
            self._write(save, text=False)
        except (sqlite3.Error, IndexUnavailable) as exc:  # only a slower next start
            log.info("recall vocabulary not saved: %r", exc)

    def _load_saved_vocab(self) -> bool:
        """The saved vocabulary as the snapshot, when it is not too far behind the
        index (then marked stale: the writer reads it again). Whether it was used."""

        def read(c: sqlite3.Connection) -> tuple[int | None, tuple | None, int]:
            c.execute("BEGIN")
            try:
                docs = c.execute("SELECT count(*) FROM docs").fetchone()[0]
                return _generation(c), c.execute("SELECT gen, data FROM vocab_saved").fetchone(), docs
            finally:
                c.execute("COMMIT")

        nothing: tuple[int | None, tuple | None, int] = (None, None, 0)
        try:
            now, row, docs = self._run(read, nothing)
        except (sqlite3.Error, IndexUnavailable):
            return False
        df = _saved_vocab(row, now, max(SAVED_BEHIND, docs // SAVED_SHARE))
        if df is None or now is None or row is None:
            return False
        with self._lock:
            self._df, self._terms = df, sorted(df)
            self._df_time = float("-inf") if row[0] != now else time.monotonic()
            self._df_dirty = row[0] != now
        return True

    def _df_of(self, term: str) -> int:
        row = self._run(lambda c: c.execute("SELECT doc FROM vocab WHERE term=?", (term,)).fetchone(), None)
        return row[0] if row else 0

    def lexicon(self) -> Lexicon:
        """The vocabulary snapshot, to turn query words into terms."""
        self._df_snapshot()
        with self._lock:  # the pair of one snapshot (a refresh swaps both)
            df, terms = self._df, self._terms
        assert df is not None
        lex = Lexicon(df, terms, self._df_of)
        lex.total = self._total()
        return lex

    def search(
        self,
        text: str,
        active: tuple[str, ...] | None,
        limit: int = 5,
        *,
        exclude: str | None = None,
        prefix_last: bool = False,
    ) -> list[Hit]:
        """A user's query or a user's turn to the agent: its content words (stop words dropped), each
        matching its other forms, its shorthand and, failing all, a one-typo fix. active None or () is
        the operator's unfiltered view; otherwise only global, legacy and active-workspace memories."""
        items = with_multiword(phrases(text, prefix_last=prefix_last), text)
        if not items:
            return []
        lex = self.lexicon()
        chat = not any(is_content(p) for p in items)
        terms = lex.terms(content_words(items), typos=not chat)
        if chat:
            # Nothing but stop words ("where", "thanks, that worked!"): searched for only as a whole,
            # every word in the memory, and no preference lifted by them.
            if any(t.df == 0 for t in terms):
                return []
            return self._ranked(terms, lex, active, limit, exclude, NO_FLOOR, boost=False, every=True)
        if prefix_last:
            # Still being typed (workspace symbols): a list to pick a memory from, up to 50 long,
            # refreshed at every keystroke. FTS5's order over the same terms, no re-scoring, no floor.
            return self._ranked(terms, lex, active, limit, exclude, NO_FLOOR, boost=True, rescore=False)
        return self._ranked(terms, lex, active, limit, exclude, SEARCH_FLOOR, boost=True)

    def related(
        self,
        text: str,
        active: tuple[str, ...] | None,
        limit: int = 5,
        *,
        exclude: str | None = None,
        keep: int = MAX_RELATED_TERMS,
        rescore: bool = True,
    ) -> list[Hit]:
        """Memories related to a piece of text: its `keep` most distinctive words (rarest in the store;
        stop words and the very common ones dropped, which also keeps the query cheap at 100k memories)
        with their forms, ranked like a search, above RELATED_FLOOR: a hover may show nothing. Without
        rescore, FTS5's order and no floor: candidates for a caller that judges them itself."""
        lex = self.lexicon()
        picked = self.distinctive(text, keep, self_in_index=exclude is not None)
        terms = lex.terms(picked, shorthand=False, typos=False)
        floor = RELATED_FLOOR if rescore else NO_FLOOR
        return self._ranked(terms, lex, active, limit, exclude, floor, boost=False, rescore=rescore)

    def distinctive(
        self, text: str, keep: int = MAX_RELATED_TERMS, *, self_in_index: bool = False
    ) -> list[Phrase]:
        items = [p for p in phrases(text, limit=256) if len(p.text) > 1 and p.text not in STOP_WORDS]
        if not items:
            return []
        df = self.doc_frequencies(p.text for p in items)
        # Words only one memory has say nothing about others when that memory is the one asking
        # (a hover excludes itself): without this, a file of unique words relates to nothing.
        floor = 1 if self_in_index else 0
        present = [p for p in items if df.get(p.text, 0) > floor]
        if not present:
            return []
        total = max(self._total(), 1)
        cutoff = max(COMMON_SHARE * total, MIN_COMMON)
        rare = [p for p in present if df[p.text] <= cutoff]
        pool = sorted(rare or present, key=lambda p: (df[p.text], -len(p.text)))
        # The rarest words first, as many as keep the query's matches under BROAD (at least two):
        # a small store gets every word, a large one only those that are cheap and telling.
        chosen: list[Phrase] = []
        work = 0
        for p in pool:
            if len(chosen) >= keep or (len(chosen) >= 2 and work + df[p.text] > BROAD):
                break
            chosen.append(p)
            work += df[p.text]
        return chosen

    def _total(self) -> int:
        """How many memories are indexed, for the common-word cutoff: an estimate is enough, so it is
        cached for a few seconds (a full count of the FTS table costs milliseconds at 10k)."""
        now = time.monotonic()
        cached = self._count_cache
        if cached is None or now - cached[1] > 5.0:
            count = int(
                self._run(
                    lambda c: c.execute("SELECT count(*) FROM docs WHERE category <> 'session'").fetchone()[
                        0
                    ],
                    0,
                )
            )
            self._count_cache = cached = (count, now)
        return cached[0]

    def _ranked(
        self,
        terms: list[Term],
        lex: Lexicon,
        active: tuple[str, ...] | None,
        limit: int,
        exclude: str | None,
        floor: Floor,
        *,
        boost: bool,
        rescore: bool = True,
        every: bool = False,
    ) -> list[Hit]:
        """The best memories for terms: FTS5 gathers the pool matching any alternative (with every,
        only memories matching all terms), scoring.score ranks it (BM25F per term, times coverage),
        the floor drops what is too weak, and with boost a preference passes a memory scoring up to
        PREFERENCE_TIE more (a near-tie, nothing else)."""
        if not terms or limit <= 0:
            return []
        cands = self._pool(terms, active, exclude, limit + RERANK_ROOM if rescore else limit, every)
        if not rescore or (len(terms) == 1 and len(terms[0].alts) == 1):
            # Asked not to, or one word with no other form: FTS5's bm25 is that ranking already and
            # every candidate covers the query; scoring again would only cost time.
            scored = [Scored(c, c.rank, 1.0) for c in cands]
        else:
            scored = score(cands, terms, lex)
        if not scored:
            return []
        best = max(s.relevance for s in scored)
        now = time.time()
        kept = [
            ((_with_preference(s.relevance, s.candidate, now) if boost else s.relevance), s.candidate)
            for s in scored
            if s.coverage >= floor.coverage and s.relevance >= floor.relative * best
        ]
        kept.sort(key=lambda pair: -pair[0])
        return [_hit(c, value) for value, c in kept[:limit]]

    def _pool(
        self,
        terms: list[Term],
        active: tuple[str, ...] | None,
        exclude: str | None,
        pool: int,
        every: bool = False,
    ) -> list[Candidate]:
        """The candidates: memories matching any alternative of any term. With several terms, those
        holding every term are asked first: when they fill the pool, they are what the ranking would
        keep anyway (they cover the whole query), found for a fraction of the cost of scoring every
        memory that holds any of the words (FTS5 scores each match before sorting)."""
        alts = [a for t in terms for a in t.alts]
        prefixed = any(a.prefix for a in alts)  # a prefix can stand for any number of words
        found: list[Candidate] = []
        if every or (1 < len(terms) <= AND_FIRST_TERMS and min(t.df for t in terms) <= BROAD):
            expr = " AND ".join("(" + " OR ".join(a.expr for a in t.alts) + ")" for t in terms)
            estimate = BROAD + 1 if prefixed else min(t.df for t in terms)
            found = self._candidates(expr, active, exclude, pool, estimate)
            if every or len(found) >= pool:
                return found
        estimate = BROAD + 1 if prefixed else sum(t.df for t in terms)
        pooled = self._candidates(match_expr(alts), active, exclude, pool, estimate)
        if estimate > BROAD:
            # Ranked over the most recent matches only: the memories holding the query's rarer words
            # (an exact name, a number) are asked for on their own, so an old one is never lost to that
            # cut, and those holding every word (found above) stay in too.
            rare = [t for t in terms if t.df <= BROAD and not any(a.prefix for a in t.alts)]
            if rare and len(rare) < len(terms):
                rare_alts = [a for t in rare for a in t.alts]
                pooled = (
                    self._candidates(match_expr(rare_alts), active, exclude, pool, sum(t.df for t in rare))
                    + pooled
                )
        return _union(found, pooled)

    def _candidates(
        self, expr: str | None, active: tuple[str, ...] | None, exclude: str | None, pool: int, estimate: int
    ) -> list[Candidate]:
        """The pool best by bm25. A query matching more than BROAD memories (a very common word) is
        ranked over the BROAD most recently indexed of them: bm25 must score every match, which at 100k
        memories would cost far more than a keystroke's budget, and over so many matches the word says
        little anyway; recent memories are the better guess."""
        if expr is None:
            return []
        where, params = "", [expr]
        if active:
            where = f" AND d.scope IN ({','.join('?' * (len(active) + 1))})"
            params += [GLOBAL, *active]
        if exclude is not None:
            where += " AND d.vpath <> ?"
            params.append(exclude)
        rank = f"bm25(fts, {', '.join(map(str, WEIGHTS))})"
        cols = f"d.id, d.vpath, d.title, d.category, d.workspace, d.mtime, {rank} AS r"
        base = f"FROM fts f JOIN docs d ON d.id = f.rowid WHERE fts MATCH ?{where}"
        if estimate > BROAD:
            sql = f"SELECT * FROM (SELECT {cols} {base} ORDER BY f.rowid DESC LIMIT {BROAD}) ORDER BY r LIMIT {pool}"
        else:
            sql = f"SELECT {cols} {base} ORDER BY r LIMIT {pool}"

        def fn(c: sqlite3.Connection) -> list[Candidate]:
            rows = c.execute(sql, params).fetchall()
            # Bodies only for the pool: reading every match's body would cost more than ranking.
            ids = [row[0] for row in rows]
            marks = ",".join("?" * len(ids))
            bodies = dict(c.execute(f"SELECT rowid, body FROM fts WHERE rowid IN ({marks})", ids).fetchall())
            return [
                Candidate(rowid, v, t, cat, ws, bodies.get(rowid, ""), mtime, -r)
                for rowid, v, t, cat, ws, mtime, r in rows
            ]

        try:
            return self._run(fn, [])
        except sqlite3.OperationalError as exc:  # a locked database: recall is best-effort
            log.warning("recall query failed: %s", exc)
            return []


def _upgrade(conn: sqlite3.Connection, tables: set[str]) -> None:
    """An index made by an earlier version gains the tables it lacks: seals (which writes need), the
    saved vocabulary (which nothing needs: while another connection holds a long write, this connection
    goes on without it, and a later one adds it)."""
    if "seal" not in tables:
        conn.execute(_SEAL)
    try:
        if not {"vocab_gen", "vocab_saved"} <= tables:
            for statement in _VOCAB_TABLES:
                conn.execute(statement)
    except sqlite3.OperationalError as exc:
        if not is_transient(exc):
            raise
        log.info("recall index not upgraded yet: %s", exc)


def _count_written(c: sqlite3.Connection, docs: int) -> None:
    try:
        c.execute("UPDATE vocab_gen SET n = n + ?", (max(docs, 1),))
    except sqlite3.OperationalError:  # an index not upgraded yet: no saved vocabulary to keep in step
        pass


def _generation(c: sqlite3.Connection) -> int | None:
    try:
        row = c.execute("SELECT n FROM vocab_gen").fetchone()
    except sqlite3.OperationalError:  # an index without the table (read-only, before it was added)
        return None
    return row[0] if row and isinstance(row[0], int) else None


def _saved_vocab(row: tuple | None, now: int | None, behind: int) -> dict[str, int] | None:
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


def _unseal(c: sqlite3.Connection, vpaths: Iterable[str]) -> None:
    from ..caches.segments import segment_of

    c.executemany("DELETE FROM seal WHERE seg = ?", ((seg,) for seg in {segment_of(v) for v in vpaths}))


def _union(first: list[Candidate], then: list[Candidate]) -> list[Candidate]:
    """Both pools, each memory once (as the first pool had it)."""
    out, seen = list(first), {c.rowid for c in first}
    for c in then:
        if c.rowid not in seen:
            seen.add(c.rowid)
            out.append(c)
    return out


def _schema_state(conn: sqlite3.Connection) -> tuple[int, set[str]]:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    return version, {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _create_schema(conn: sqlite3.Connection) -> bool:
    """Create the schema of a new database under one write lock, checking again inside it: another
    connection creating it at the same moment (the CLI beside the server) is waited for, and its
    half-made schema is never mistaken for a foreign one and rebuilt. Whether this call created it."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version, tables = _schema_state(conn)
        if version == 0 and not tables:
            for statement in (s for s in _SCHEMA.split(";") if s.strip()):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return version == 0 and not tables


# Measured on the labeled set (scripts/recall_eval/README.md): a stricter floor cuts more noise but also
# related memories people want (grade 1), and costs nDCG; these keep nDCG within 0.005 of no floor.
SEARCH_FLOOR = Floor(coverage=0.1, relative=0.06)
RELATED_FLOOR = Floor(coverage=0.1, relative=0.0)
NO_FLOOR = Floor(coverage=0.0, relative=0.0)


def _hit(c: Candidate, value: float) -> Hit:
    return Hit(c.vpath, c.title, c.category, c.workspace, c.body, value, c.mtime)


def _with_preference(relevance: float, cand: Candidate, now: float) -> float:
    """Preferences break near-ties, recent ones most: a preference is what the user wants honoured, but
    it never outranks a memory that matches the query clearly better."""
    if cand.category == "preference":
        age_days = max(0.0, (now - cand.mtime) / 86400.0)
        relevance *= 1.0 + PREFERENCE_TIE * math.pow(0.5, age_days / PREFERENCE_HALF_LIFE_DAYS)
    return relevance
