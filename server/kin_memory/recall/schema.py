"""The recall index's tables: what a new database is made of, and what an older one gains.

One row per memory in `docs` (virtual path, title, category, workspace stamp, the scope the workspace
filter compares, mtime and size for ranking and display, and the freshness key of the reading it was made
from: store/freshness.py) and, except for session memories, one row in the FTS5 table `fts` (path,
title, body). A database of another SCHEMA_VERSION is not migrated: it is a cache, rebuilt from the files.
"""

from __future__ import annotations

import logging
import sqlite3

from ..store.paths import is_transient
from .peek import DB_NAME, DB_SUFFIXES, SCHEMA_VERSION

__all__ = [
    "DB_NAME",
    "DB_SUFFIXES",
    "SCHEMA_VERSION",
    "check_schema",
    "create_schema",
    "schema_state",
    "upgrade",
]

log = logging.getLogger("kin_memory.recall")

# `seal`: per segment of the store's files (caches/segments.py), the digest of what `docs` holds of
# it (vpath, freshness key), kept by the writer's seal() and dropped by any write to that segment. A start
# compares it with the files' own digests: a segment that matches needs no look at its rows.
SEAL_TABLE = "CREATE TABLE IF NOT EXISTS seal(seg INTEGER PRIMARY KEY, listing BLOB NOT NULL)"
# `vocab_gen`: documents written or removed since the index was made (every text write adds its count).
# `vocab_saved`: the vocabulary (term, memories holding it) as read at generation `gen` (see
# caches/recall_vocab.py): one row to read at a start instead of a pass over the whole full-text index.
VOCAB_TABLES = (
    "CREATE TABLE IF NOT EXISTS vocab_gen(one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO vocab_gen VALUES (1, 0)",
    "CREATE TABLE IF NOT EXISTS vocab_saved(one INTEGER PRIMARY KEY CHECK (one = 1), gen INTEGER NOT NULL, "
    "data BLOB NOT NULL)",
)
# `vectors`: the semantic layer's sentence vector of a memory (semantic/vectors.py), by its `docs` row;
# `seq` only grows, so a reader holding the vectors in memory appends what is newer than it read. A
# `docs` row removed takes its vector with it (the trigger), and `vector_gen` counts rows added and
# removed, so a reader knows at one row's cost whether its copy is current. Plain SQL: nothing of the
# layer (the model, numpy) is needed to keep these in step, and with the layer off they only wait.
VECTOR_TABLES = (
    "CREATE TABLE IF NOT EXISTS vectors(seq INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER UNIQUE NOT NULL, "
    "v BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vector_gen(one INTEGER PRIMARY KEY CHECK (one = 1), added INTEGER NOT NULL, "
    "removed INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO vector_gen VALUES (1, 0, 0)",
    "CREATE TRIGGER IF NOT EXISTS vectors_added AFTER INSERT ON vectors "
    "BEGIN UPDATE vector_gen SET added = added + 1 WHERE one = 1; END",
    "CREATE TRIGGER IF NOT EXISTS vectors_removed AFTER DELETE ON vectors "
    "BEGIN UPDATE vector_gen SET removed = removed + 1 WHERE one = 1; END",
    "CREATE TRIGGER IF NOT EXISTS docs_vectors AFTER DELETE ON docs "
    "BEGIN DELETE FROM vectors WHERE id = old.id; END",
)
# `refs`: the `/memories/…` paths each memory's text names (store/references.py), so a rename reads only
# the memories that name the old path. `docs.refs_read` says a row's references are known: 0 for a row
# another build wrote or an editor buffer's, and put back to 0 by any writer's update of the row's `key`
# (the trigger), so a row whose file changed is never taken to name nothing.
REFS_COLUMN = "ALTER TABLE docs ADD COLUMN refs_read INTEGER NOT NULL DEFAULT 0"
REFS_TABLES = (
    "CREATE TABLE IF NOT EXISTS refs(id INTEGER NOT NULL, target TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS refs_target ON refs(target)",
    "CREATE INDEX IF NOT EXISTS refs_id ON refs(id)",
    "CREATE INDEX IF NOT EXISTS docs_refs_unread ON docs(id) WHERE refs_read = 0",
    "CREATE TRIGGER IF NOT EXISTS docs_refs AFTER DELETE ON docs BEGIN DELETE FROM refs WHERE id = old.id; END",
    "CREATE TRIGGER IF NOT EXISTS docs_refs_stale AFTER UPDATE OF key ON docs "
    "BEGIN UPDATE docs SET refs_read = 0 WHERE id = new.id; END",
)
_CORE = (
    """CREATE TABLE docs(
  id INTEGER PRIMARY KEY,
  vpath TEXT UNIQUE NOT NULL,
  title TEXT NOT NULL,
  category TEXT NOT NULL,
  workspace TEXT,
  scope TEXT,
  mtime REAL NOT NULL,
  size INTEGER NOT NULL,
  key INTEGER NOT NULL
)""",
    "CREATE INDEX docs_scope ON docs(scope)",
    "CREATE VIRTUAL TABLE fts USING fts5(path, title, body, tokenize='unicode61 remove_diacritics 2')",
    "CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row')",
)
REQUIRED = frozenset({"docs", "fts", "vocab"})  # a database without these is not an index of ours


def schema_state(conn: sqlite3.Connection) -> tuple[int, set[str]]:
    """The database's schema version and its tables."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    return version, {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def create_schema(conn: sqlite3.Connection) -> bool:
    """Create the schema of a new database under one write lock, checking again inside it: another
    connection creating it at the same moment (the CLI beside the server) is waited for, and its
    half-made schema is never mistaken for a foreign one and rebuilt. Whether this call created it."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version, tables = schema_state(conn)
        if version == 0 and not tables:
            for statement in (*_CORE, SEAL_TABLE, *VOCAB_TABLES, *VECTOR_TABLES, REFS_COLUMN, *REFS_TABLES):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return version == 0 and not tables


def check_schema(conn: sqlite3.Connection, version: int, tables: set[str]) -> None:
    """DatabaseError (a rebuild) unless the database is an index of this version that reads."""
    if version != SCHEMA_VERSION or not REQUIRED <= tables:
        raise sqlite3.DatabaseError(f"schema version {version}, this version uses {SCHEMA_VERSION}")
    conn.execute("SELECT count(*) FROM docs").fetchone()
    conn.execute("SELECT rowid FROM fts LIMIT 1").fetchall()
    upgrade(conn, tables)


def upgrade(conn: sqlite3.Connection, tables: set[str]) -> None:
    """An index made by an earlier build of this version gains the tables it lacks: seals (which writes
    need), the saved vocabulary (which nothing needs: while another connection holds a long write, this
    connection goes on without it, and a later one adds it)."""
    if "seal" not in tables:
        conn.execute(SEAL_TABLE)
    if not {"vectors", "vector_gen"} <= tables:  # the trigger on `docs` must exist before any write
        for statement in VECTOR_TABLES:
            conn.execute(statement)
    if "refs" not in tables:  # like the vectors': the triggers must exist before any write
        if "refs_read" not in {row[1] for row in conn.execute("PRAGMA table_info(docs)")}:
            conn.execute(REFS_COLUMN)
        for statement in REFS_TABLES:
            conn.execute(statement)
    try:
        if not {"vocab_gen", "vocab_saved"} <= tables:
            for statement in VOCAB_TABLES:
                conn.execute(statement)
    except sqlite3.OperationalError as exc:
        if not is_transient(exc):
            raise
        log.info("recall index not upgraded yet: %s", exc)
