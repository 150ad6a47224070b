"""History's catch-up judges a file unchanged by the store's one freshness rule: a memory rewritten at the
same size with its old mtime put back (what `tar -x`, `rsync -t`, `cp -p` and sync clients do) is read
again and its new content kept; a version database of the first schema is upgraded in place."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from kin_memory.history.db import DB_NAME, database
from kin_memory.history.query import content_of, history_of
from kin_memory.history.sync import catch_up
from kin_memory.store.freshness import UNSURE, trusted

BEFORE = b"---\ncategory: project-fact\n---\nThe cache is alpha.\n"
AFTER = b"---\ncategory: project-fact\n---\nThe cache is omega.\n"


def settled(path: Path) -> None:
    """Until the file's last change is old enough for a reading of it to be trusted (a clock tick and
    its margin): the catch-up then keeps the file's key, not UNSURE."""
    while not trusted(os.stat(path).st_ctime_ns, time.time()):
        time.sleep(0.01)


def kept_key(root: Path, vpath: str) -> int:
    with database(root).transaction() as conn:
        return conn.execute("SELECT key FROM files WHERE vpath=?", (vpath,)).fetchone()[0]


def test_a_same_size_rewrite_with_its_old_mtime_put_back_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    path = root / "facts" / "cache.md"
    path.write_bytes(BEFORE)
    settled(path)
    catch_up(root)
    assert kept_key(root, "/memories/facts/cache.md") != UNSURE  # the key, not the racy rule, decides
    st = os.stat(path)

    path.write_bytes(AFTER)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(path).st_mtime_ns, os.stat(path).st_size) == (st.st_mtime_ns, st.st_size)
    catch_up(root)

    newest = history_of(root, "/memories/facts/cache.md")[0]
    assert content_of(root, "/memories/facts/cache.md", newest.version) == AFTER
    assert newest.source == "external"


def test_a_version_database_of_the_first_schema_is_upgraded_and_keeps_its_versions(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    path = root / "facts" / "cache.md"
    path.write_bytes(BEFORE)
    catch_up(root)
    first = history_of(root, "/memories/facts/cache.md")
    database(root).close()
    conn = sqlite3.connect(root / ".kin-index" / DB_NAME)  # as the first schema left it
    with conn:
        conn.execute("DROP TABLE files")
        conn.execute(
            "CREATE TABLE files(vpath TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL)"
        )
        conn.execute("UPDATE meta SET value='1' WHERE key='schema'")
    conn.close()

    assert history_of(root, "/memories/facts/cache.md") == first
    path.write_bytes(AFTER)
    catch_up(root)
    newest = history_of(root, "/memories/facts/cache.md")[0]
    assert content_of(root, "/memories/facts/cache.md", newest.version) == AFTER
    assert len(history_of(root, "/memories/facts/cache.md")) == len(first) + 1
