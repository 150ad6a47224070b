"""The recall index on real SQLite FTS5 over real files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kin_memory.caches import recall_vocab
from kin_memory.recall import database
from kin_memory.recall.index import DB_NAME, SCHEMA_VERSION, IndexUnavailable, RecallIndex
from kin_memory.recall.service import Recall
from kin_memory.store.paths import HIDDEN_DIR
from support.memfiles import memory, write

WS = "/srv/repos/app"
OTHER = "/srv/repos/other"


def paths(hits) -> list[str]:
    return [h.vpath if hasattr(h, "vpath") else h[0].vpath for h in hits]


def crafted(root: Path) -> None:
    write(
        root,
        "facts/deploy-topology.md",
        memory("project-fact", "# Deploy topology\n\nThe API runs on three nodes behind the gateway.\n", WS),
    )
    write(
        root,
        "facts/database.md",
        memory(
            "project-fact",
            "# Database\n\nPostgres primary with one replica; deploy migrations before the API.\n",
            WS,
        ),
    )
    write(
        root,
        "notes/long-episode.md",
        memory(
            "episodic",
            "# Friday\n\n"
            + "We talked about lunch and the weather. " * 40
            + "Someone mentioned deploy once.\n",
            WS,
        ),
    )
    write(
        root,
        "prefs/tabs.md",
        memory("preference", "# Indentation\n\nThe user prefers tabs over spaces in Go code.\n"),
    )
    write(
        root,
        "foreign/secret-plan.md",
        memory(
            "project-fact", "# Other deploy\n\nThe other team deploys with a blue green gateway.\n", OTHER
        ),
    )
    write(root, "legacy.md", "No frontmatter at all: the gateway timeout is 30 seconds.\n")
    write(
        root,
        "session/today.md",
        memory("session", "# Scratch\n\nThe gateway password rotation is in progress today.\n"),
    )
    write(root, "MEMORY.md", "# Index\n\n- gateway notes\n")


def test_ranking_prefers_path_and_title_matches(store: Path) -> None:
    crafted(store)
    r = Recall(store)
    r.sync_disk()
    hits = r.search("deploy", (WS,))
    assert paths(hits)[0] == "/memories/facts/deploy-topology.md"  # in path and title, not only in body
    assert "/memories/notes/long-episode.md" in paths(hits)
    assert paths(hits).index("/memories/notes/long-episode.md") > paths(hits).index(
        "/memories/facts/database.md"
    )


def test_workspace_filter_is_hard_and_operator_view_sees_all(store: Path) -> None:
    crafted(store)
    r = Recall(store)
    r.sync_disk()
    assert "/memories/foreign/secret-plan.md" not in paths(r.search("gateway", (WS,), limit=50))
    assert "/memories/foreign/secret-plan.md" not in paths(r.search("other team blue green", (WS,), limit=50))
    assert "/memories/foreign/secret-plan.md" in paths(r.search("gateway", (), limit=50))
    assert "/memories/foreign/secret-plan.md" in paths(r.search("gateway", (OTHER,), limit=50))
    # legacy (no stamp) and global memories are visible from every workspace
    assert "/memories/legacy.md" in paths(r.search("gateway timeout", (OTHER,)))
    assert "/memories/prefs/tabs.md" in paths(r.search("tabs", (OTHER,)))


def test_session_memories_and_memory_md_are_never_indexed(store: Path) -> None:
    crafted(store)
    r = Recall(store)
    r.sync_disk()
    assert paths(r.search("password rotation", ())) == []
    assert "/memories/MEMORY.md" not in paths(r.search("gateway notes", (), limit=50))
    # recorded, so a warm restart does not re-read them either
    assert "/memories/session/today.md" in r.index.known()
    assert "/memories/MEMORY.md" not in r.index.known()


def test_preferences_are_recency_weighted(store: Path) -> None:
    body = "# Review style\n\nThe user wants short review comments about naming and tests.\n"
    write(store, "prefs/review-new.md", memory("preference", body))
    write(store, "prefs/review-old.md", memory("preference", body), age_days=700)
    # an episode that repeats the words more often than the preference states them
    write(
        store,
        "notes/friday.md",
        memory(
            "episodic",
            "# Friday\n\nWe wrote review comments on naming; review comments on naming again.\n",
            "global",
        ),
    )
    r = Recall(store)
    r.sync_disk()
    order = paths(r.search("review comments naming", ()))
    assert order.index("/memories/prefs/review-new.md") < order.index("/memories/prefs/review-old.md")
    assert order[0] == "/memories/prefs/review-new.md"


HOSTILE = [
    "",
    "   ",
    '"',
    '""',
    "'",
    "deploy-topology",
    "a/b/c",
    "NEAR(deploy api)",
    "deploy AND",
    "AND OR NOT",
    "*",
    "dep*",
    "**",
    "(",
    ")",
    "((deploy",
    "deploy)",
    "😀",
    "gateway 😀 deploy",
    "title:deploy",
    "^deploy",
    "deploy + api",
    "-deploy",
    'col:"x"',
    "\x00",
    "NEAR",
    '"unbalanced',
    "x" * 5000,
    "ü∂ƒ©",
    "日本語のメモ",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(store: Path, query: str) -> None:
    crafted(store)
    r = Recall(store)
    r.sync_disk()
    for active in ((), (WS,)):
        r.search(query, active)
        r.search(query, active, prefix_last=True)
        r.index.related(query, active)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_any_text_is_a_safe_query(store: Path, query: str) -> None:
    if not (store / HIDDEN_DIR).exists():
        crafted(store)
        Recall(store).sync_disk()
    r = Recall(store)
    hits = r.search(query, (WS,), prefix_last=True)
    assert all(h.vpath != "/memories/foreign/secret-plan.md" for h, _ in hits)


def test_and_falls_back_to_or(store: Path) -> None:
    crafted(store)
    r = Recall(store)
    r.sync_disk()
    # no memory has both words: the AND query is empty, the OR query is not
    assert paths(r.search("postgres weather", (WS,)))[:2] != []


def test_an_old_memory_with_the_rare_word_survives_a_broad_word(store: Path) -> None:
    """A word in more than BROAD memories is ranked over the most recent of them only: the one old
    memory that also holds the query's rare word must still be found (it once got lost)."""
    from kin_memory.recall.index import BROAD

    write(store, "notes/target.md", memory("project-fact", "# Target\n\nnumber4711 about the harbour\n", WS))
    r = Recall(store)
    r.sync_disk()  # indexed first: the lowest rowid, the oldest by the broad cut
    for i in range(BROAD + 50):
        write(store, f"notes/n{i:04}.md", memory("project-fact", f"# Note {i}\n\nfiller{i} harbour\n", WS))
    r.sync_disk()
    for query in ("number4711 harbour", "harbour number4711", "number4711 harbour filler3"):
        assert "/memories/notes/target.md" in paths(r.search(query, (WS,))), query


def test_seals_follow_what_the_index_holds(store: Path) -> None:
    """A segment's seal is the digest of the index's rows of it: made by seal(), dropped by any write to
    that segment, read back as it was written."""
    import os

    from kin_memory.caches.segments import SEGMENTS, listing_digest, segment_of
    from kin_memory.recall.peek import Lag

    crafted(store)
    r = Recall(store)
    r.sync_disk()
    assert r.index.seal() == SEGMENTS and r.index.seal() == 0
    from kin_memory.store.freshness import key_of

    files: dict[int, list[tuple[str, int]]] = {}
    for path in store.rglob("*.md"):
        vpath = "/memories/" + path.relative_to(store).as_posix()
        if vpath != "/memories/MEMORY.md" and "session" not in vpath:
            st = os.stat(path)
            files.setdefault(segment_of(vpath), []).append((vpath, key_of(st)))
    lag = Lag(store)
    seals = lag.sealed()
    lag.close()
    assert all(seals[seg] == listing_digest(listed) for seg, listed in files.items())
    write(store, "facts/database.md", memory("project-fact", "# Database\n\nNow MySQL.\n", WS))
    r.sync_disk()
    lag = Lag(store)
    after = lag.sealed()
    lag.close()
    assert set(seals) - set(after) == {segment_of("/memories/facts/database.md")}
    assert r.index.seal() == 1


def test_warm_restart_reads_zero_files(store: Path) -> None:
    crafted(store)
    first = Recall(store).sync_disk()
    assert first.read == 7  # every memory but MEMORY.md
    again = Recall(store).sync_disk()
    assert again.read == 0 and again.removed == 0 and again.files == 7
    write(store, "facts/database.md", memory("project-fact", "# Database\n\nNow MySQL.\n", WS))
    (store / "legacy.md").unlink()
    third = Recall(store).sync_disk()
    assert (third.read, third.removed) == (1, 1)
    assert paths(Recall(store).search("mysql", (WS,))) == ["/memories/facts/database.md"]


@pytest.mark.parametrize("damage", ["garbage", "truncate", "delete", "version", "wrong-schema"])
def test_broken_database_is_rebuilt(store: Path, damage: str, caplog) -> None:
    crafted(store)
    first = Recall(store)
    first.sync_disk()
    first.index.close()  # the last connection closing checkpoints the WAL into the file
    db = store / HIDDEN_DIR / DB_NAME
    if damage == "garbage":
        db.write_bytes(b"this is not a database" * 500)
    elif damage == "truncate":
        db.write_bytes(db.read_bytes()[:1500])
    elif damage == "delete":
        db.unlink()
    elif damage == "version":
        with sqlite3.connect(db) as c:
            c.execute(f"PRAGMA user_version={SCHEMA_VERSION + 7}")
    else:
        db.unlink()
        with sqlite3.connect(db) as c:
            c.execute("CREATE TABLE unrelated(x)")
    r = Recall(store)
    stats = r.sync_disk()
    assert stats.read == 7
    assert paths(r.search("deploy topology", (WS,)))[0] == "/memories/facts/deploy-topology.md"
    if damage != "delete":
        assert r.index.rebuilds == 1
        assert "rebuilding" in caplog.text


def test_database_deleted_while_open_is_rebuilt(store: Path) -> None:
    crafted(store)
    r = Recall(store)
    r.sync_disk()
    assert r.search("deploy", (WS,))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store / HIDDEN_DIR / DB_NAME}{suffix}").unlink(missing_ok=True)
    assert r.search("deploy", (WS,)) == []  # a fresh, empty index: no crash
    assert r.sync_disk().read == 7
    assert r.search("deploy", (WS,))


def test_index_lives_in_the_hidden_folder_with_private_modes(store: Path) -> None:
    crafted(store)
    Recall(store).sync_disk()
    folder = store / HIDDEN_DIR
    assert folder.name.startswith(".")
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert oct((folder / DB_NAME).stat().st_mode & 0o777) == "0o600"


def test_unreadable_store_folder_gives_no_crash(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "memory"
    (tmp_path / "nowhere").write_text("a file where the store's parent folder should be")
    r = Recall(missing)
    assert r.search("deploy", ()) == []


def test_body_reads_are_capped(store: Path) -> None:
    write(
        store,
        "big.md",
        memory("project-fact", "# Big\n\n" + "filler " * 20000 + "needle-at-the-end\n", "global"),
    )
    r = Recall(store)
    r.sync_disk()
    assert r.search("filler", ())
    assert r.search("needle", ()) == []  # past the 64 KB cap: never recalled
    assert len(r.search("filler", ())[0][0].body.encode()) <= 64 * 1024


def test_sync_reports_progress_and_honours_cancel(store: Path) -> None:
    for i in range(30):
        write(store, f"n/{i}.md", memory("episodic", f"# N{i}\n\nnote {i}\n", "global"))
    seen: list[tuple[int, int]] = []
    stats = RecallIndex(store).sync({}, lambda v: None)
    assert stats.read == 0
    r = Recall(store)
    calls = {"n": 0}

    def cancelled() -> bool:
        calls["n"] += 1
        return calls["n"] > 2

    partial = r.sync_disk(progress=lambda d, t: seen.append((d, t)), cancelled=cancelled, chunk=10)
    assert partial.read == 20 and seen == [(10, 30), (20, 30)]
    assert Recall(store).sync_disk().read == 10  # the rest, next time


def test_related_skips_words_only_the_asking_memory_has(store: Path) -> None:
    # Twelve words only this memory has would otherwise fill the query and relate it to nothing.
    unique = " ".join(f"zq{i}unique" for i in range(14))
    write(store, "facts/asking.md", memory("project-fact", f"# Asking\n\n{unique} harbour crane\n", "global"))
    write(
        store,
        "facts/other.md",
        memory("project-fact", "# Other\n\nThe harbour crane lifts containers.\n", "global"),
    )
    r = Recall(store)
    r.sync_disk()
    hits = r.index.related(f"{unique} harbour crane", (), exclude="/memories/facts/asking.md")
    assert [h.vpath for h in hits] == ["/memories/facts/other.md"]


def test_an_index_locked_by_another_process_is_not_rebuilt(store: Path, monkeypatch) -> None:
    """A second server in the middle of a long write holds the database: this one's queries fail for now
    (the caller says the index is unavailable), and nothing is wiped."""
    crafted(store)
    first = Recall(store)
    first.sync_disk()
    first.index.close()
    db = store / HIDDEN_DIR / DB_NAME
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE docs SET size = size")
    monkeypatch.setattr(database, "BUSY_TIMEOUT", 0.1)
    locked = RecallIndex(store)
    try:
        with pytest.raises((IndexUnavailable, sqlite3.OperationalError)):
            locked.known()
        assert locked.rebuilds == 0
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert len(locked.known()) == 7 and locked.rebuilds == 0
    assert paths(Recall(store).search("deploy topology", (WS,)))[0] == "/memories/facts/deploy-topology.md"


def _fresh_vocabulary(store: Path) -> dict[str, int]:
    with sqlite3.connect(store / HIDDEN_DIR / DB_NAME) as c:
        return dict(c.execute("SELECT term, doc FROM vocab").fetchall())


def test_a_start_takes_the_saved_vocabulary_while_it_is_recent(store: Path) -> None:
    """Reading the vocabulary from the full-text index is a pass over all of it (over a second at 100k):
    the writer saves what it read, and the next start uses that copy while it is at most SAVED_BEHIND
    documents behind (the writer then reads it again). A damaged copy is never used."""
    from kin_memory.recall.records import RecallDoc

    crafted(store)
    first = Recall(store)
    first.sync_disk()
    first.warm()  # the writer's refresh: reads the vocabulary and saves it
    first.index.close()
    again = RecallIndex(store)
    assert again.vocab.load_saved() and again.vocab.df == _fresh_vocabulary(store) and not again.vocab.dirty
    assert paths(Recall(store).search("deploy topology", (WS,)))[0] == "/memories/facts/deploy-topology.md"

    def doc(n: int) -> RecallDoc:
        return RecallDoc(f"/memories/new/n{n}.md", f"New {n}", f"zqfresh{n} words", "project-fact", None,
                         "global", 1.0, 10, 1)  # fmt: skip

    again.upsert([doc(n) for n in range(3)])  # a few writes since: used, marked stale
    behind = RecallIndex(store)
    assert behind.vocab.load_saved() and behind.vocab.dirty and "zqfresh1" not in (behind.vocab.df or {})
    assert behind.search("zqfresh1", ()) and behind.search("zqfresh1", ())[0].vpath == "/memories/new/n1.md"
    behind.refresh_vocab()  # the writer reads it again and saves it
    assert behind.vocab.df == _fresh_vocabulary(store) and not behind.vocab.dirty
    assert RecallIndex(store).vocab.load_saved()
    again.upsert([doc(n) for n in range(10, 10 + recall_vocab.SAVED_BEHIND + 1)])  # too far behind
    assert not RecallIndex(store).vocab.load_saved()
    with sqlite3.connect(store / HIDDEN_DIR / DB_NAME) as c:  # damaged: a line without its count
        gen = c.execute("SELECT n FROM vocab_gen").fetchone()[0]
        c.execute("UPDATE vocab_saved SET gen = ?, data = ?", (gen, b"deploy\t3\ntopology"))
    assert not RecallIndex(store).vocab.load_saved()


def test_an_index_from_before_the_saved_vocabulary_is_read_while_another_writes(
    store: Path, monkeypatch
) -> None:
    """Adding the saved-vocabulary tables to an older index is a write: while another connection holds a
    long write (the index writer's first sync), a query's connection reads on without them."""
    crafted(store)
    first = Recall(store)
    first.sync_disk()
    held = first.index.count()
    first.index.close()
    db = store / HIDDEN_DIR / DB_NAME
    with sqlite3.connect(db) as c:  # as an earlier version left it
        c.execute("DROP TABLE vocab_gen")
        c.execute("DROP TABLE vocab_saved")
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(database, "BUSY_TIMEOUT", 0.1)
    reader = RecallIndex(store)
    try:
        assert reader.count() == held > 0 and reader.rebuilds == 0
        assert "/memories/facts/deploy-topology.md" in reader.known()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    later = RecallIndex(store)
    assert later.count() == held
    later.refresh_vocab(force=True)  # the tables are there now: the vocabulary is saved
    assert RecallIndex(store).vocab.load_saved()


def test_a_connection_that_meets_a_passing_lock_is_tried_again(store: Path, monkeypatch) -> None:
    """Some of SQLite's lock waits answer "locked" at once (another connection making or recovering the
    database): the connection is tried again for a while, not given up (nor the database wiped)."""
    crafted(store)
    Recall(store).sync_disk()
    index = RecallIndex(store)
    real, calls = index.db._connect, []

    def flaky() -> sqlite3.Connection:
        calls.append(1)
        if len(calls) <= 3:
            busy = sqlite3.OperationalError("database is locked")
            busy.sqlite_errorcode = 5  # type: ignore[attr-defined]  # SQLITE_BUSY, as SQLite raises it
            raise busy
        return real()

    monkeypatch.setattr(index.db, "_connect", flaky)
    assert index.count() > 0 and len(calls) == 4 and index.rebuilds == 0


def test_a_saved_vocabulary_may_lag_by_a_share_of_a_big_index(store: Path, monkeypatch) -> None:
    """In a big index the saved copy stays usable while it lags by up to one document in SAVED_SHARE: a
    word only newer documents hold is still found (it is looked up in the index, never fixed away)."""
    from kin_memory.recall.records import RecallDoc

    monkeypatch.setattr(recall_vocab, "SAVED_BEHIND", 2)
    monkeypatch.setattr(recall_vocab, "SAVED_SHARE", 4)

    def doc(n: int) -> RecallDoc:
        return RecallDoc(f"/memories/bulk/n{n}.md", f"Bulk {n}", f"zqbulk{n} filler words", "project-fact",
                         None, "global", 1.0, 10, 1)  # fmt: skip

    crafted(store)
    first = Recall(store)
    first.sync_disk()
    first.index.upsert([doc(n) for n in range(40)])
    first.index.refresh_vocab(force=True)  # read and saved at this generation
    first.index.close()
    docs = RecallIndex(store).count()
    writer = RecallIndex(store)
    writer.upsert([doc(n) for n in range(1000, 1000 + docs // 4)])  # a quarter of the index since
    lagging = RecallIndex(store)
    assert lagging.vocab.load_saved() and lagging.vocab.dirty and "zqbulk1003" not in (lagging.vocab.df or {})
    assert [h.vpath for h in lagging.search("zqbulk1003", ())] == ["/memories/bulk/n1003.md"]
    writer.upsert([doc(n) for n in range(2000, 2000 + docs)])  # now far behind
    assert not RecallIndex(store).vocab.load_saved()
