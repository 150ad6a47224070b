"""The memories' sentence vectors: stored with the recall index, held in memory for ranking.

Each visible memory (one with a full-text row: session memories have none) gets one vector of its title
and body, in the `vectors` table keyed by its `docs` row (schema.py). The index's one freshness rule
covers it: a changed file gets a new `docs` row, and a trigger drops the old row's vector, so it is
embedded again; an unchanged file keeps its row and its vector, and is never embedded twice.

A vector is stored as int8 with its own scale (4 + 384 bytes); in memory the int8 matrix is kept (38 MB
at 100k memories) and scored in slices small enough to stay in the processor's cache, which is as fast
as a float32 matrix four times its size. The matrix is read on the first ranking query (or by the fill),
never at start, and then kept in step from two counters the triggers keep (rows added, rows removed):
new rows are appended, and only a removal makes it look at which rows are gone.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...store.categories import SESSION
from ...store.workspace import GLOBAL
from ..database import Database
from .model import DIM

SLICE = 512  # rows scored at once: int8 → float32 of a slice stays in the processor's cache
_HEAD = 4  # bytes of the float32 scale before the int8 components


def pack(vec: np.ndarray) -> bytes:
    """A unit vector as its scale and int8 components (the largest component maps to ±127)."""
    peak = float(np.abs(vec).max()) or 1.0
    scale = np.float32(peak / 127.0)
    q = np.clip(np.rint(vec / scale), -127, 127).astype(np.int8)
    return scale.tobytes() + q.tobytes()


def unpack(blob: bytes) -> np.ndarray:
    scale = np.frombuffer(blob[:_HEAD], dtype=np.float32)[0]
    return np.frombuffer(blob[_HEAD:], dtype=np.int8).astype(np.float32) * scale


def embedded_text(title: str, body: str) -> str:
    """The title, then the body without its title heading (the title said once, without markup)."""
    first, _, rest = body.lstrip().partition("\n")
    if title and first.startswith("#") and first.lstrip("#").strip() == title.strip():
        body = rest
    return f"{title}\n{body.strip()}".strip()


class Vectors:
    """The stored vectors, as a matrix kept in step with the table. Thread-safe."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._gen: tuple[int, int] | None = None  # (added, removed) when last read; None: never read
        self._hw = 0  # highest `seq` read
        self._n = 0
        self._seq = np.zeros(0, dtype=np.int64)
        self._ids = np.zeros(0, dtype=np.int64)
        self._scope = np.zeros(0, dtype=np.int32)  # codes into _scopes
        self._scale = np.zeros(0, dtype=np.float32)
        self._mat = np.zeros((0, DIM), dtype=np.int8)
        self._scopes: dict[str | None, int] = {}
        self._row_of: dict[int, int] = {}  # docs id → row

    # -- writing ---------------------------------------------------------------------------------
    def missing(self) -> list[tuple[int, int]]:
        """(docs id, freshness key) of every indexed memory without a vector, oldest row first."""
        # A memory has a full-text row exactly when it is no session memory (writer._put): asked of `docs`
        # alone, this is a pass over one table (2 ms at 10k), not a lookup in the full-text index per
        # memory (13 ms), and the server asks it after every write.
        sql = (
            "SELECT d.id, d.key FROM docs d LEFT JOIN vectors v ON v.id = d.id "
            f"WHERE v.id IS NULL AND d.category <> '{SESSION}' ORDER BY d.id"
        )
        rows: list[tuple[int, int]] = self.db.run(lambda c: c.execute(sql).fetchall(), [])
        return rows

    def text_of(self, doc_id: int) -> str | None:
        """The text a memory's vector is made of: its title and body (None when its row is gone)."""
        sql = "SELECT d.title, f.body FROM docs d JOIN fts f ON f.rowid = d.id WHERE d.id = ?"
        row = self.db.run(lambda c: c.execute(sql, (doc_id,)).fetchone(), None)
        return None if row is None else embedded_text(row[0], row[1])

    def put(self, items: Iterable[tuple[int, int, np.ndarray]]) -> int:
        """Store (docs id, key, vector) for the rows still as they were read: a memory rewritten
        meanwhile has a new row (or a new key) and gets its own vector later. How many were stored."""
        batch = [(i, pack(v), i, k) for i, k, v in items]
        stored = 0

        def fn(c: sqlite3.Connection) -> None:
            nonlocal stored
            for row in batch:
                cur = c.execute(
                    "INSERT OR IGNORE INTO vectors(id, v) SELECT ?, ? WHERE EXISTS "
                    "(SELECT 1 FROM docs WHERE id = ? AND key = ?)",
                    row,
                )
                stored += cur.rowcount

        if batch:
            self.db.transaction(fn)
        return stored

    # -- reading ---------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Bring the matrix in step with the table: new rows appended, removed rows dropped."""
        gen = self.db.run(lambda c: c.execute("SELECT added, removed FROM vector_gen").fetchone(), None)
        if gen is None:
            return
        gen = (int(gen[0]), int(gen[1]))
        with self._lock:
            if gen == self._gen:
                return
            if self._gen is not None and gen[1] != self._gen[1]:
                present: list[int] = self.db.run(
                    lambda c: [r[0] for r in c.execute("SELECT seq FROM vectors")], []
                )
                self._keep(np.isin(self._seq[: self._n], np.asarray(present, dtype=np.int64)))
            sql = (
                "SELECT v.seq, v.id, d.scope, v.v FROM vectors v JOIN docs d ON d.id = v.id "
                "WHERE v.seq > ? ORDER BY v.seq"
            )
            rows: list[Any] = self.db.run(lambda c: c.execute(sql, (self._hw,)).fetchall(), [])
            self._append(rows)
            self._gen = gen

    def _keep(self, mask: np.ndarray) -> None:
        n = int(mask.sum())
        for name in ("_seq", "_ids", "_scope", "_scale", "_mat"):
            arr = getattr(self, name)
            kept = arr[: self._n][mask]
            grown = np.zeros((max(n, 16),) + arr.shape[1:], dtype=arr.dtype)
            grown[:n] = kept
            setattr(self, name, grown)
        self._n = n
        self._row_of = {int(i): r for r, i in enumerate(self._ids[:n])}

    def _append(self, rows: list[Any]) -> None:
        if not rows:
            return
        need = self._n + len(rows)
        if need > len(self._seq):
            cap = max(need, 2 * len(self._seq), 16)
            for name in ("_seq", "_ids", "_scope", "_scale", "_mat"):
                arr = getattr(self, name)
                grown = np.zeros((cap,) + arr.shape[1:], dtype=arr.dtype)
                grown[: self._n] = arr[: self._n]
                setattr(self, name, grown)
        for seq, doc_id, scope, blob in rows:
            r = self._n
            old = self._row_of.get(doc_id)
            if old is not None:  # a docs id used again: the old row's vector is gone with it
                self._seq[old] = -1
            self._seq[r] = seq
            self._ids[r] = doc_id
            self._scope[r] = self._scopes.setdefault(scope, len(self._scopes))
            self._scale[r] = np.frombuffer(blob[:_HEAD], dtype=np.float32)[0]
            self._mat[r] = np.frombuffer(blob[_HEAD:], dtype=np.int8)
            self._row_of[doc_id] = r
            self._n += 1
            self._hw = max(self._hw, seq)

    def count(self) -> int:
        return self._n

    def vector_of(self, doc_id: int) -> np.ndarray | None:
        with self._lock:
            r = self._row_of.get(doc_id)
            if r is None:
                return None
            return self._mat[r].astype(np.float32) * self._scale[r]

    def scores(
        self, query: np.ndarray, active: tuple[str, ...] | None, exclude: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(docs ids, cosines) of the memories visible from `active` (None or (): every memory; else
        global, legacy and the active workspaces', exactly as the full-text filter has it)."""
        with self._lock:
            n = self._n
            sims = np.empty(n, dtype=np.float32)
            for start in range(0, n, SLICE):
                end = min(n, start + SLICE)
                sims[start:end] = self._mat[start:end].astype(np.float32) @ query
            sims *= self._scale[:n]
            keep = self._seq[:n] >= 0
            if active:
                allowed = [code for scope, code in self._scopes.items() if scope == GLOBAL or scope in active]
                keep &= np.isin(self._scope[:n], np.asarray(allowed, dtype=np.int32))
            ids = self._ids[:n]
            if exclude is not None:
                keep &= ids != exclude
            return ids[keep].copy(), sims[keep]

    def cosines(self, query: np.ndarray, doc_ids: Iterable[int]) -> dict[int, float]:
        """The cosine of each of these memories that has a vector."""
        out: dict[int, float] = {}
        with self._lock:
            for i in doc_ids:
                r = self._row_of.get(i)
                if r is not None:
                    out[i] = float(self._mat[r].astype(np.float32) @ query) * float(self._scale[r])
        return out
