"""The persistent recall index: SQLite FTS5 in the store's hidden folder, one object for its users.

`RecallIndex` composes the parts, each of one role:

- database.py: the file, a connection per thread, rebuilt when corrupt, refused behind a link;
- schema.py: its tables and version;
- writer.py: every write (a memory's rows, a sync with the files by their freshness keys, the seals);
- queries.py: search, related memories and their ranking;
- caches/recall_vocab.py and caches/recall_seals.py: what only makes it fast (the vocabulary
  snapshot and its saved copy, the per-segment seals a start compares with the files).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from ..caches.recall_vocab import DF_REFRESH, SAVED_BEHIND, SAVED_SHARE, Vocabulary
from ..store.freshness import Key
from .database import BUSY_TIMEOUT, Database, IndexRefused, IndexUnavailable
from .peek import INDEXED_COUNT
from .queries import BROAD, MAX_RELATED_TERMS, NO_FLOOR, RELATED_FLOOR, SEARCH_FLOOR, Hit, Queries
from .query import Phrase
from .records import RecallDoc
from .schema import DB_NAME, SCHEMA_VERSION
from .terms import Lexicon
from .writer import SyncStats, Writer

__all__ = [
    "BROAD",
    "BUSY_TIMEOUT",
    "DB_NAME",
    "DF_REFRESH",
    "MAX_RELATED_TERMS",
    "NO_FLOOR",
    "RELATED_FLOOR",
    "SAVED_BEHIND",
    "SAVED_SHARE",
    "SCHEMA_VERSION",
    "SEARCH_FLOOR",
    "Hit",
    "IndexRefused",
    "IndexUnavailable",
    "RecallIndex",
    "SyncStats",
]

T = TypeVar("T")


class RecallIndex:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.db = Database(root)
        self.vocab = Vocabulary(self.db)
        self.writer = Writer(self.db, self.vocab)
        self.queries = Queries(self.db, self.vocab)
        self.root, self.dir, self.path = self.db.root, self.db.dir, self.db.path

    # -- the database ----------------------------------------------------------------------------
    @property
    def on_reset(self) -> Callable[[], None] | None:
        """Called when the database had to start empty (deleted, rebuilt): the owner refills it."""
        return self.db.on_reset

    @on_reset.setter
    def on_reset(self, fn: Callable[[], None] | None) -> None:
        self.db.on_reset = fn

    @property
    def refused(self) -> str | None:
        """Why the index is off (a planted link), None when usable."""
        return self.db.refused

    @property
    def rebuilds(self) -> int:
        return self.db.rebuilds

    def available(self) -> bool:
        return self.db.available()

    def _run(self, fn: Callable[[sqlite3.Connection], T], refused: T) -> T:
        return self.db.run(fn, refused)

    def close(self) -> None:
        self.db.drop_local()

    # -- writes ----------------------------------------------------------------------------------
    def known(self) -> dict[str, Key]:
        return self.writer.known()

    def count(self) -> int:
        """Memories in the full-text table (session memories are recorded in docs only)."""
        return int(self.db.run(lambda c: c.execute(INDEXED_COUNT).fetchone()[0], 0))

    def upsert(self, docs: Iterable[RecallDoc]) -> int:
        return self.writer.upsert(docs)

    def remove(self, vpaths: Iterable[str]) -> int:
        return self.writer.remove(vpaths)

    def sync(
        self,
        stats: Mapping[str, Key],
        load: Callable[[str], RecallDoc | None],
        *,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        chunk: int = 2000,
    ) -> SyncStats:
        return self.writer.sync(stats, load, progress=progress, cancelled=cancelled, chunk=chunk)

    def seal(self) -> int:
        return self.writer.seal()

    def clear(self) -> None:
        self.writer.clear()

    def refresh_vocab(self, *, force: bool = False) -> None:
        """For the index writer after its writes: the vocabulary snapshot read again when stale."""
        self.vocab.refresh(force=force)

    # -- reads -----------------------------------------------------------------------------------
    def doc_frequencies(self, terms: Iterable[str]) -> dict[str, int]:
        return self.queries.doc_frequencies(terms)

    def lexicon(self) -> Lexicon:
        return self.queries.lexicon()

    def search(
        self,
        text: str,
        active: tuple[str, ...] | None,
        limit: int = 5,
        *,
        exclude: str | None = None,
        prefix_last: bool = False,
    ) -> list[Hit]:
        return self.queries.search(text, active, limit, exclude=exclude, prefix_last=prefix_last)

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
        return self.queries.related(text, active, limit, exclude=exclude, keep=keep, rescore=rescore)

    def distinctive(
        self, text: str, keep: int = MAX_RELATED_TERMS, *, self_in_index: bool = False
    ) -> list[Phrase]:
        return self.queries.distinctive(text, keep, self_in_index=self_in_index)
