"""History: every write the product makes keeps the previous version first; restore brings any kept
version back byte for byte (a deleted or swept memory too); retention keeps at most what it is told."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from kin_memory.history import retention
from kin_memory.history.db import Retention, database
from kin_memory.history.query import HistoryError, content_of, history_of
from kin_memory.history.restore import restore
from kin_memory.history.sync import catch_up
from kin_memory.history.versions import capture
from kin_memory.proposals.apply import apply_proposal
from kin_memory.proposals.model import Proposal, proposed
from kin_memory.store.lifecycle import Thresholds
from kin_memory.tool.commands import run
from kin_memory.tool.review import mark_reviewed
from kin_memory.tool.sweep import apply_sweep, plan_sweep

# Bytes a text round trip would not keep: CRLF, a BOM-less Latin-1 byte, no final newline.
FACT = b"---\r\ncategory: project-fact\r\n---\r\nPostgres listens on 5432.\r\ncaf\xe9 notes"
EPISODE = b"---\ncategory: episodic\n---\nThe outage of March.\n"


def make(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "episodes").mkdir()
    (root / "facts" / "db.md").write_bytes(FACT)
    (root / "facts" / "ok.md").write_bytes(b"---\ncategory: project-fact\n---\nalpha\n")
    (root / "episodes" / "old.md").write_bytes(EPISODE)
    old = time.time() - 90 * 86400
    os.utime(root / "episodes" / "old.md", (old, old))
    catch_up(root)
    return root


def versions(root: Path, vpath: str) -> list[tuple[str, bool]]:
    return [(v.source, v.deleted) for v in history_of(root, vpath)]


def restorable(root: Path, vpath: str, data: bytes) -> int:
    """The number of the kept version holding exactly `data`."""
    for v in history_of(root, vpath):
        if not v.deleted and content_of(root, vpath, v.version) == data:
            return v.version
    raise AssertionError(f"no version of {vpath} holds {data!r}")


def tool(root: Path, **inp: object) -> None:
    res = run(root, None, inp)
    assert res["isError"] is False, res


# ---------------------------------------------------------------- every write source


def test_a_first_catch_up_keeps_every_memory_as_it_is(tmp_path: Path) -> None:
    root = make(tmp_path)
    assert versions(root, "/memories/facts/db.md") == [("external", False)]
    assert (
        content_of(root, "/memories/facts/db.md", history_of(root, "/memories/facts/db.md")[0].version)
        == FACT
    )


def test_a_server_catch_up_pauses_between_small_batches(tmp_path: Path) -> None:
    """A first start reads every file: the server's catch-up stops every few files to let the queries
    someone waits for go first, and keeps exactly what an uninterrupted one keeps."""
    root = tmp_path / "memory"
    for n in range(120):
        write_file = root / "notes" / f"n{n:03}.md"
        write_file.parent.mkdir(parents=True, exist_ok=True)
        write_file.write_bytes(b"---\ncategory: project-fact\n---\nnote %d\n" % n)
    pauses: list[int] = []
    stats = catch_up(root, lambda: pauses.append(len(history_of(root, "/memories/notes/n000.md"))))
    assert stats.read == 120 and stats.first
    # one pause before the comparison with what was last seen, then one before each batch of 10
    assert len(pauses) == 1 + 12
    assert pauses[:3] == [0, 0, 1]  # the pause comes before each batch is kept
    assert all(len(history_of(root, f"/memories/notes/n{n:03}.md")) == 1 for n in range(120))


def test_str_replace_insert_and_create_keep_the_previous_version_labelled_tool(tmp_path: Path) -> None:
    root = make(tmp_path)
    vpath = "/memories/facts/ok.md"
    first = (root / "facts" / "ok.md").read_bytes()
    tool(root, command="str_replace", path=vpath, old_str="alpha", new_str="beta")
    second = (root / "facts" / "ok.md").read_bytes()
    tool(root, command="insert", path=vpath, insert_line=4, insert_text="gamma")
    assert versions(root, vpath) == [("tool", False), ("tool", False), ("external", False)]
    restore(root, vpath, restorable(root, vpath, first))
    assert (root / "facts" / "ok.md").read_bytes() == first
    restore(root, vpath, restorable(root, vpath, second))
    assert (root / "facts" / "ok.md").read_bytes() == second
    tool(
        root,
        command="create",
        path="/memories/facts/new.md",
        file_text="---\ncategory: project-fact\n---\nnew\n",
    )
    assert versions(root, "/memories/facts/new.md") == [("tool", False)]


def test_delete_of_a_folder_keeps_every_memory_in_it_and_restore_brings_one_back_byte_for_byte(
    tmp_path: Path,
) -> None:
    root = make(tmp_path)
    tool(root, command="delete", path="/memories/facts")
    assert not (root / "facts").exists()
    assert versions(root, "/memories/facts/db.md") == [("tool", True), ("external", False)]
    restore(root, "/memories/facts/db.md", restorable(root, "/memories/facts/db.md", FACT))
    assert (root / "facts" / "db.md").read_bytes() == FACT
    assert stat.S_IMODE((root / "facts" / "db.md").stat().st_mode) == 0o600
    assert versions(root, "/memories/facts/db.md")[0] == ("restore", False)


def test_rename_keeps_the_old_path_as_a_deletion_and_the_new_one_as_a_version(tmp_path: Path) -> None:
    root = make(tmp_path)
    tool(root, command="rename", old_path="/memories/facts/db.md", new_path="/memories/facts/database.md")
    assert versions(root, "/memories/facts/db.md") == [("tool", True), ("external", False)]
    assert versions(root, "/memories/facts/database.md") == [("tool", False)]
    assert (
        content_of(
            root, "/memories/facts/database.md", history_of(root, "/memories/facts/database.md")[0].version
        )
        == FACT
    )


def test_a_swept_memory_is_restored_byte_for_byte(tmp_path: Path) -> None:
    root = make(tmp_path)
    result = apply_sweep(root, plan_sweep(root, Thresholds()))
    assert result.swept == ["/memories/episodes/old.md"]
    assert versions(root, "/memories/episodes/old.md") == [("sweep", True), ("external", False)]
    restore(root, "/memories/episodes/old.md", restorable(root, "/memories/episodes/old.md", EPISODE))
    assert (root / "episodes" / "old.md").read_bytes() == EPISODE


def test_an_applied_proposal_keeps_the_previous_version_labelled_proposal(tmp_path: Path) -> None:
    root = make(tmp_path)
    after = b"---\ncategory: project-fact\n---\nPostgres listens on 5433.\n"
    p = Proposal(id="p1", source="reflect", summary="s", created=time.time(), workspace=None,
                 changes=(proposed("edit", "/memories/facts/db.md", FACT, after),
                          proposed("delete", "/memories/facts/ok.md", (root / "facts/ok.md").read_bytes(), None)))  # fmt: skip
    assert apply_proposal(root, p).conflicts == []
    assert versions(root, "/memories/facts/db.md") == [("proposal", False), ("external", False)]
    assert versions(root, "/memories/facts/ok.md") == [("proposal", True), ("external", False)]
    restore(root, "/memories/facts/db.md", restorable(root, "/memories/facts/db.md", FACT))
    assert (root / "facts" / "db.md").read_bytes() == FACT


def test_mark_reviewed_keeps_a_content_no_version_held_yet(tmp_path: Path) -> None:
    root = make(tmp_path)
    (root / "facts" / "ok.md").write_bytes(
        b"---\ncategory: project-fact\n---\nwritten while nobody watched\n"
    )
    mark_reviewed(root, "/memories/facts/ok.md")
    assert versions(root, "/memories/facts/ok.md") == [("external", False), ("external", False)]
    restorable(root, "/memories/facts/ok.md", b"---\ncategory: project-fact\n---\nalpha\n")


def test_a_write_from_outside_captured_is_kept_before_the_next_tool_write(tmp_path: Path) -> None:
    root = make(tmp_path)
    outside = b"---\ncategory: project-fact\n---\nalpha from outside\n"
    (root / "facts" / "ok.md").write_bytes(outside)
    tool(root, command="str_replace", path="/memories/facts/ok.md", old_str="alpha", new_str="beta")
    # the tool found content no version held: kept as someone else's before the tool's own
    assert versions(root, "/memories/facts/ok.md") == [
        ("tool", False),
        ("external", False),
        ("external", False),
    ]
    restorable(root, "/memories/facts/ok.md", outside)


def test_a_failed_or_refused_write_keeps_no_new_version(tmp_path: Path) -> None:
    root = make(tmp_path)
    assert run(
        root,
        None,
        {"command": "str_replace", "path": "/memories/facts/ok.md", "old_str": "zzz", "new_str": "y"},
    )["isError"]
    assert run(root, None, {"command": "delete", "path": "/memories/facts/ok.md"}, mode="plan")["isError"]
    assert versions(root, "/memories/facts/ok.md") == [("external", False)]


def test_restore_refuses_another_memorys_version_and_a_deletion(tmp_path: Path) -> None:
    root = make(tmp_path)
    other = history_of(root, "/memories/facts/ok.md")[0].version
    with pytest.raises(HistoryError, match="has no version"):
        restore(root, "/memories/facts/db.md", other)
    tool(root, command="delete", path="/memories/facts/db.md")
    gone = history_of(root, "/memories/facts/db.md")[0].version
    with pytest.raises(HistoryError, match="is its deletion"):
        restore(root, "/memories/facts/db.md", gone)
    with pytest.raises(HistoryError):
        restore(root, "/memories/../outside.md", other)


# ---------------------------------------------------------------- the store itself


def test_the_database_is_private_and_content_is_stored_once(tmp_path: Path) -> None:
    root = make(tmp_path)
    for i in range(5):  # five memories with the same content: one blob
        (root / "facts" / f"same{i}.md").write_bytes(b"---\ncategory: project-fact\n---\nsame\n")
    capture(root, [f"/memories/facts/same{i}.md" for i in range(5)])
    db = root / ".kin-index" / "history.sqlite3"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    conn = sqlite3.connect(db)
    assert (
        conn.execute("SELECT count(*) FROM versions WHERE vpath LIKE '/memories/facts/same%'").fetchone()[0]
        == 5
    )
    assert conn.execute("SELECT count(*) FROM blobs").fetchone()[0] == 4  # db, ok, old, same


def test_retention_keeps_at_most_the_configured_count(tmp_path: Path) -> None:
    root = make(tmp_path)
    with database(root).transaction() as conn:
        retention.set_limits(conn, Retention(versions=5, days=90, max_bytes=10**9))
    for i in range(12):
        tool(root, command="str_replace", path="/memories/facts/ok.md", old_str=f"alpha{'' if i == 0 else i - 1}",
             new_str=f"alpha{i}")  # fmt: skip
    kept = history_of(root, "/memories/facts/ok.md")
    assert len(kept) == 5
    assert (
        content_of(root, "/memories/facts/ok.md", kept[0].version) == (root / "facts" / "ok.md").read_bytes()
    )


def test_retention_keeps_the_total_size_under_its_bound_oldest_first(tmp_path: Path) -> None:
    root = make(tmp_path)
    with database(root).transaction() as conn:
        retention.set_limits(conn, Retention(versions=1000, days=90, max_bytes=40_000))
    body = os.urandom(6000).hex()  # compresses to about 6.5 KB per version
    tool(
        root,
        command="create",
        path="/memories/facts/big.md",
        file_text=f"---\ncategory: project-fact\n---\n0{body}\n",
    )
    for i in range(8):
        tool(root, command="str_replace", path="/memories/facts/big.md", old_str=f"{i}{body[:20]}",
             new_str=f"{i + 1}{body[:20]}")  # fmt: skip
    with database(root).transaction() as conn:
        # the previous versions fit the bound; the memories' current contents are not history
        assert retention.total(conn) - retention.current_bytes(conn) <= 40_000
        assert retention.current_bytes(conn) > 6_000  # hex text: about 6.5 KB stored per version
        stored = conn.execute("SELECT total(stored) FROM blobs").fetchone()[0]
        assert stored == retention.total(conn)
    kept = history_of(root, "/memories/facts/big.md")
    assert 1 < len(kept) < 9
    assert (
        content_of(root, "/memories/facts/big.md", kept[0].version)
        == (root / "facts" / "big.md").read_bytes()
    )
    assert [v.version for v in kept] == sorted((v.version for v in kept), reverse=True)  # the newest stayed


def test_a_linked_hidden_folder_keeps_no_history_and_the_tool_still_writes(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, root / ".kin-index")
    tool(
        root, command="create", path="/memories/facts/a.md", file_text="---\ncategory: project-fact\n---\na\n"
    )
    assert (root / "facts" / "a.md").exists()
    assert os.listdir(elsewhere) == []
    with pytest.raises(HistoryError, match="symbolic link"):
        history_of(root, "/memories/facts/a.md")
