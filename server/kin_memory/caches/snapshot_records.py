"""The records of the segment snapshots the findings cache keeps, read by the server on a read-only
connection of its own while the start-up workers may still be writing (see findings.py)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..store.paths import HIDDEN_DIR, hidden_file_problem
from .findings import DB_NAME


class SnapshotRecords:
    """The records of segments' snapshots, read on one read-only connection of its own (the server asks
    while the start-up workers may be writing)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.conn: sqlite3.Connection | None = None
        self.opened = False

    def get(self, variant: str, seg: int, listing: bytes) -> str | None:
        """The records of the segment's snapshot when it is still the one of this listing; None
        otherwise, or when there is no cache to read."""
        conn = self._connection()
        if conn is None:
            return None
        try:
            row = conn.execute(
                "SELECT records FROM segments WHERE variant = ? AND seg = ? AND listing = ?",
                (variant, seg, listing),
            ).fetchone()
        except sqlite3.Error:
            return None
        return row[0] if row is not None and isinstance(row[0], str) else None

    def _connection(self) -> sqlite3.Connection | None:
        if not self.opened:
            self.opened = True
            if hidden_file_problem(self.root, DB_NAME) is None:
                path = os.path.join(self.root, HIDDEN_DIR, DB_NAME)
                try:
                    self.conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=5.0)
                except sqlite3.Error:
                    self.conn = None
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
