"""The semantic layer of recall: the model, the stored vectors, and how far they are filled.

Imported only when `recall.semantic` is on and something ranks (recall/service.py): with it off nothing
here, nor numpy, onnxruntime or tokenizers, is ever imported.

Filling embeds, one memory at a time, every indexed memory that has no vector yet: in the language server
in the background after the lexical index (lsp/recall_sync.py), on the command line by `reindex` (with
its bar) or, for a few memories, right before a search. Until every memory has its vector, rankings are
lexical and say that the layer is still filling: a half-filled dense list would rank the memories that
happen to be embedded above those that are not.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..database import Database
from ..peek import INDEXED_COUNT
from .model import Embedder, ModelUnavailable, shared
from .vectors import Vectors

log = logging.getLogger("kin_memory.recall")
QUERY_CACHE = 64  # query vectors kept (1.5 KB each)
CATCH_UP = 24  # missing vectors a ranking query embeds itself first (≈ 0.25 s); more: it says "filling"


@dataclass(frozen=True)
class FillState:
    missing: int  # indexed memories without a vector
    total: int  # indexed memories
    problem: str | None = None  # why the layer cannot work (the model not installed or not the pinned one)

    @property
    def ready(self) -> bool:
        return self.problem is None and self.missing == 0


class SemanticLayer:
    def __init__(self, db: Database, embedder: Callable[[], Embedder] = shared) -> None:
        self.db = db
        self.vectors = Vectors(db)
        self._embedder = embedder
        self._model: Embedder | None = None
        self.problem: str | None = None
        self._missing: int | None = None  # as last counted; None: not counted yet
        self._total = 0
        self._fill_lock = threading.Lock()
        self._complete = False  # every memory had its vector once: rankings use the layer from then on
        self._counted_at: tuple[int, ...] | None = None  # the index's generation when last counted
        self._queries: dict[str, np.ndarray] = {}
        self._query_lock = threading.Lock()

    def model(self) -> Embedder | None:
        if self._model is None and self.problem is None:
            try:
                self._model = self._embedder()
            except ModelUnavailable as exc:
                self.problem = str(exc)
                log.warning("semantic recall off: %s", exc)
        return self._model

    def embed(self, text: str) -> np.ndarray | None:
        model = self.model()
        return None if model is None else model.embed(text)

    def embed_query(self, text: str) -> np.ndarray | None:
        """A query's vector, the last QUERY_CACHE kept: a search asks for two views of the same query
        (this workspace and every one, for "n more elsewhere"), and symbols ask again as the user types."""
        with self._query_lock:
            vec = self._queries.pop(text, None)
            if vec is not None:
                self._queries[text] = vec  # most recent last
                return vec
        vec = self.embed(text)
        if vec is not None:
            with self._query_lock:
                self._queries[text] = vec
                while len(self._queries) > QUERY_CACHE:
                    self._queries.pop(next(iter(self._queries)))
        return vec

    @property
    def complete(self) -> bool:
        """Every memory had its vector once (from then on rankings use the layer: a memory written later
        is embedded by the next fill, and found by its words meanwhile)."""
        return self._complete and self.problem is None

    def state(self, *, count: bool = True) -> FillState:
        """As last counted (without `count`, never counted here: a missing count reads -1)."""
        if self._missing is None:
            if not count:
                return FillState(-1, self._total, self.problem)
            self._count()
        if self._complete:
            return FillState(0, self._total, self.problem)
        return FillState(self._missing or 0, self._total, self.problem)

    def nearest(
        self, vector: np.ndarray, active: tuple[str, ...] | None, k: int, exclude: int | None = None
    ) -> list[tuple[int, float]]:
        """The k visible memories nearest in meaning: (index row, cosine), best first."""
        self.vectors.refresh()
        ids, sims = self.vectors.scores(vector, active, exclude)
        if not len(ids):
            return []
        top = np.argpartition(-sims, k)[:k] if len(ids) > k else np.arange(len(ids))
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(ids[i]), float(sims[i])) for i in top]

    def _generation(self) -> tuple[int, ...] | None:
        """Counters every write to the index moves (documents written or removed, vectors added or
        removed): while they stand still, what is missing stays as counted."""
        sql = "SELECT (SELECT n FROM vocab_gen), added, removed FROM vector_gen"

        def read(c: sqlite3.Connection) -> tuple[int, ...] | None:
            try:
                row = c.execute(sql).fetchone()
            except sqlite3.OperationalError:  # an index made before the saved vocabulary: count each time
                return None
            return None if row is None else tuple(int(v or 0) for v in row)

        return self.db.run(read, None)

    def _count(self) -> int:
        gen = self._generation()
        if gen is not None and gen == self._counted_at and self._missing is not None:
            return self._missing  # nothing written since: a ranking query does not pay for a count
        missing = self.vectors.missing()
        self._missing = len(missing)
        self._complete = self._complete or not missing
        self._total = int(self.db.run(lambda c: c.execute(INDEXED_COUNT).fetchone()[0], 0))
        self._counted_at = gen
        return self._missing

    def fill(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        before_each: Callable[[], None] | None = None,
        limit: int | None = None,
        seconds: float | None = None,
    ) -> int:
        """Embed the memories without a vector, one at a time (at most `limit`, or for about `seconds`),
        each stored at once. before_each runs before each memory (the server yields to queries there).
        How many are still missing afterwards (0: complete)."""
        if self.model() is None:
            return self._missing or 0
        with self._fill_lock:
            todo = self.vectors.missing()
            self._missing = len(todo)
            if limit is not None:
                todo = todo[:limit]
            deadline = None if seconds is None else time.monotonic() + seconds
            total, done = len(todo), 0
            for doc_id, key in todo:
                if (cancelled is not None and cancelled()) or (deadline and time.monotonic() > deadline):
                    break
                if before_each is not None:
                    before_each()
                text = self.vectors.text_of(doc_id)
                if text is not None:
                    vec = self.embed(text)
                    if vec is None:
                        break
                    self.vectors.put([(doc_id, key, vec)])
                done += 1
                self._missing -= 1
                if progress is not None:
                    progress(done, total)
            return self._count()

    def catch_up(self) -> FillState:
        """Before a ranking query (the command line, an agent): counted afresh, and a few missing
        vectors embedded now; more are left to the fill, and the answer is lexical meanwhile."""
        missing = self._count()
        if self.problem is None and 0 < missing <= CATCH_UP:
            self.fill(limit=CATCH_UP)
        return self.state()
