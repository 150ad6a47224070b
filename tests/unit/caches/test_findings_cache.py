"""The findings cache: an entry is reused only while it says exactly what a fresh check would say."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.caches.checked import check_files
from kin_memory.caches.findings import DB_NAME, FindingsCache
from kin_memory.findings.run import check_memory
from kin_memory.store.context import Context
from kin_memory.store.lifecycle import Thresholds, lifecycle, next_change
from kin_memory.store.memory import load
from kin_memory.store.paths import HIDDEN_DIR
from kin_memory.store.store import scan
from support.memfiles import memory, write

DAY = 86400.0


def render(mem, findings) -> bytes:
    rows = [[f.code, f.severity, f.message, f.span.line, f.span.col] for f in findings]
    return json.dumps(rows).encode() if rows else b""


def files_of(root: Path) -> list[tuple[Path, str]]:
    return [(p, v) for p, v, is_index in scan(root)[0] if not is_index]


def check(root: Path, ctx: Context) -> tuple[dict[str, bytes], int]:
    """(vpath → rendered findings, cache hits), writing back like every caller does."""
    cache = FindingsCache.open(root)
    try:
        done = check_files(files_of(root), ctx, "test", render, cache)
        assert done is not None
        done.write_back(cache, ctx.now)
        return {c.vpath: c.payload for c in done.checked}, done.hits
    finally:
        if cache is not None:
            cache.close()


def fresh(root: Path, ctx: Context) -> dict[str, bytes]:
    return {v: render(None, check_memory(load(p, v), ctx)) for p, v in files_of(root)}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(
        root, "facts/old.md", memory("project-fact", "# Old\n\nPort 5432.\n", "/srv/none-such"), age_days=400
    )
    write(root, "episodes/e.md", memory("episodic", "# E\n\nRan it.\n"), age_days=38)
    write(root, "prefs/p.md", memory("preference", "# P\n\nSquash.\n"))
    write(root, "sessions/s.md", memory("session", "scratch\n"), age_days=0.05)
    return root


def test_a_second_check_answers_from_the_cache_and_agrees_with_a_fresh_check(store: Path) -> None:
    ctx = Context(root=store)
    first, hits = check(store, ctx)
    assert hits == 0 and first == fresh(store, ctx)
    second, hits = check(store, ctx)
    assert hits == 4 and second == first
    assert (store / HIDDEN_DIR / DB_NAME).stat().st_mode & 0o777 == 0o600


def test_a_changed_file_is_checked_again(store: Path) -> None:
    ctx = Context(root=store)
    check(store, ctx)
    write(store, "prefs/p.md", "---\ncategory: Preference\n---\nSquash.\n")  # now KM2xx: casing
    again, hits = check(store, ctx)
    assert hits == 3 and again == fresh(store, ctx) and again["/memories/prefs/p.md"]


def test_another_context_does_not_reuse_entries(store: Path) -> None:
    check(store, Context(root=store))
    stricter = Context(root=store, thresholds=Thresholds(stale_days=1000))
    out, hits = check(store, stricter)
    assert hits == 0 and out == fresh(store, stricter)
    assert not any("KM400" in p.decode() for p in out.values())
    quiet = Context(root=store, severity={"KM301": "off"})
    out, hits = check(store, quiet)
    assert hits == 0 and "KM301" not in b"".join(out.values()).decode()


def test_an_entry_expires_when_its_lifecycle_message_can_change(store: Path) -> None:
    now = Context(root=store).now
    check(store, Context(root=store, now=now))
    out, hits = check(store, Context(root=store, now=now + 10))
    assert hits == 4
    later = Context(root=store, now=now + 5 * DAY)  # the episode expired meanwhile, the session too
    out, hits = check(store, later)
    assert out == fresh(store, later) and "KM402" in out["/memories/episodes/e.md"].decode()
    assert hits == 1  # only the preference says the same at any time
    earlier = Context(root=store, now=now - DAY)  # before the entries were computed: not reused
    assert check(store, earlier)[0] == fresh(store, earlier)


def test_a_stamped_repository_appearing_clears_the_quiet_finding(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    repo = tmp_path / "repo"
    write(root, "facts/a.md", memory("project-fact", "# A\n\nx\n", str(repo)))
    ctx = Context(root=root)
    first, _ = check(root, ctx)
    assert "KM301" in first["/memories/facts/a.md"].decode()
    repo.mkdir()
    again, hits = check(root, Context(root=root, now=ctx.now + 1))
    assert hits == 0 and "KM301" not in again["/memories/facts/a.md"].decode()


def test_a_corrupt_cache_is_discarded_and_rebuilt(store: Path) -> None:
    ctx = Context(root=store)
    check(store, ctx)
    db = store / HIDDEN_DIR / DB_NAME
    for suffix in ("-wal", "-shm"):
        (store / HIDDEN_DIR / (DB_NAME + suffix)).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    out, hits = check(store, ctx)
    assert hits == 0 and out == fresh(store, ctx)
    assert check(store, ctx)[1] == 4


def test_a_foreign_database_is_discarded(store: Path) -> None:
    import sqlite3

    (store / HIDDEN_DIR).mkdir(mode=0o700)
    conn = sqlite3.connect(store / HIDDEN_DIR / DB_NAME)
    conn.execute("CREATE TABLE entries (x)")
    conn.commit()
    conn.close()
    ctx = Context(root=store)
    assert check(store, ctx) == (fresh(store, ctx), 0)
    assert check(store, ctx)[1] == 4


def test_a_linked_hidden_folder_means_no_cache_and_nothing_written_elsewhere(
    store: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, store / HIDDEN_DIR)
    ctx = Context(root=store)
    assert FindingsCache.open(store) is None
    assert check(store, ctx) == (fresh(store, ctx), 0)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("category", ["project-fact", "episodic", "session", "preference"])
def test_next_change_is_exact_for_every_category(category: str) -> None:
    """Between now and next_change the status and label stay put; just after, they may move (and, at a
    sampled set of ages, do within the next grid step)."""
    t = Thresholds()
    mtime = 1_800_000_000.0
    for age in [0.01, 0.4, 1.9, 3.0, 20.0, 35.2, 36.9, 41.3, 41.99, 43.0, 179.4, 180.2, 500.0]:
        now = mtime + age * DAY
        until = next_change(category, mtime, now, t)
        assert until > now
        seen = lifecycle(category, mtime, now, t)
        if until == float("inf"):
            assert category == "preference"
            continue
        for frac in (0.25, 0.5, 0.75, 0.999):
            x = now + (until - now) * frac
            at = lifecycle(category, mtime, x, t)
            assert (at.status, at.label, int(at.age_days)) == (seen.status, seen.label, int(seen.age_days))


def test_cli_check_second_run_prints_the_same(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "facts/old.md", memory("project-fact", "# Old\n\nPort.\n"), age_days=400)
    write(root, "episodes/e.md", memory("Episodic", "# E\n\nRan it.\n"), age_days=50)
    write(root, "MEMORY.md", "# Memory\n\n- [Gone](/memories/gone.md)\n")
    env = {**os.environ, "HOME": str(tmp_path), "KIN_MEMORY_DIR": str(root)}

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kin_memory", "check", "--format", "json"], env=env,
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)  # fmt: skip

    first, second = run(), run()
    assert first.stdout == second.stdout and first.returncode == second.returncode
    codes = {f["code"] for f in json.loads(second.stdout)}
    assert {"KM400", "KM202", "KM502"} <= codes
    (root / HIDDEN_DIR / DB_NAME).unlink()
    for suffix in ("-wal", "-shm"):
        (root / HIDDEN_DIR / (DB_NAME + suffix)).unlink(missing_ok=True)
    assert run().stdout == first.stdout


def test_cli_check_summary_follows_every_change_it_depends_on(tmp_path: Path) -> None:
    """The third run answers from the whole-store summary; a changed file, a moved repository or another
    working folder (relative paths in the output) each give a fresh answer."""
    root = tmp_path / "memory"
    repo = tmp_path / "repo"
    write(root, "facts/a.md", memory("project-fact", "# A\n\nx\n", str(repo)))
    write(root, "facts/b.md", memory("project-fact", "# B\n\ny\n"), age_days=400)
    env = {**os.environ, "HOME": str(tmp_path), "KIN_MEMORY_DIR": str(root)}

    def run(cwd: Path = tmp_path) -> str:
        out = subprocess.run([sys.executable, "-m", "kin_memory", "check"], env=env, capture_output=True,
                             text=True, timeout=60, cwd=cwd)  # fmt: skip
        return out.stdout

    first = run()
    assert "KM301" in first and "KM400" in first and first.startswith("memory/")
    assert run() == first and run() == first
    repo.mkdir()  # the stamped repository appears: KM301 goes
    assert "KM301" not in run()
    write(root, "facts/b.md", memory("Project-Fact", "# B\n\ny\n"))  # changed: casing, no longer stale
    changed = run()
    assert "KM400" not in changed and "KM202" in changed
    elsewhere = run(cwd=root)
    assert elsewhere.startswith("facts/")


def test_a_start_expects_hits_only_from_a_cache_this_code_wrote(store: Path) -> None:
    from kin_memory.caches.findings import entries_of_this_code

    assert entries_of_this_code(store) == 0  # no cache yet: the start reads the whole store
    check(store, Context(root=store))
    assert entries_of_this_code(store) == 4
    # A start counts only what it can use: its own context's entries, not the CLI's or another's.
    from kin_memory.caches.findings import variant_key

    assert entries_of_this_code(store, [variant_key(Context(root=store), "test")]) == 4
    assert entries_of_this_code(store, [variant_key(Context(root=store), "lsp-utf-16")]) == 0
    assert (
        entries_of_this_code(store, [variant_key(Context(root=store, active=("/elsewhere",)), "test")]) == 0
    )
    import sqlite3

    conn = sqlite3.connect(store / HIDDEN_DIR / DB_NAME)
    conn.execute("UPDATE meta SET value = 'an older build' WHERE key = 'code'")
    conn.commit()
    conn.close()
    assert entries_of_this_code(store) == 0


def test_cli_summary_brings_aged_messages_up_to_date(tmp_path: Path, monkeypatch) -> None:
    """A big store always has some message about to age ("expires … in 22 hours"): the summary stays in
    use; a message that only changed its wording is rewritten without reading the file, a new status
    (expiring → expired) has its file checked again, alone; the output equals a check without cache."""
    import dataclasses

    from kin_memory.cli import check as cli_check
    from kin_memory.store import memory as memory_module

    root = tmp_path / "memory"
    for n in range(6):
        write(root, f"facts/f{n}.md", memory("project-fact", f"# F{n}\n\nPort {n}.\n"), age_days=400)
    write(root, "scratch/s.md", memory("session", "# S\n\nNow.\n"), age_days=0.3)  # expires within hours
    monkeypatch.chdir(tmp_path)
    ctx = Context(root=root)

    def fresh(at: Context) -> cli_check.Part:
        for suffix in ("", "-wal", "-shm"):
            (root / HIDDEN_DIR / (DB_NAME + suffix)).unlink(missing_ok=True)
        return cli_check._summarised_store_part(root, at, None, "text")

    def no_whole_check(*args, **kwargs):
        raise AssertionError("the summary was not used")

    real_load = memory_module.load

    def from_summary(at: Context) -> tuple[cli_check.Part, list[str]]:
        reads: list[str] = []

        def counting_load(path, vpath, *args, **kwargs):
            reads.append(vpath)
            return real_load(path, vpath, *args, **kwargs)

        with monkeypatch.context() as m:
            m.setattr("kin_memory.caches.checked.load", counting_load)
            m.setattr(cli_check, "check_through_cache", no_whole_check)
            return cli_check._summarised_store_part(root, at, None, "text"), reads

    first = cli_check._summarised_store_part(root, ctx, None, "text")
    for hours, code, read in ((3, "KM403", []), (20, "KM404", ["/memories/scratch/s.md"])):
        later = dataclasses.replace(ctx, now=ctx.now + hours * 3600, disk={})
        aged, reads = from_summary(later)
        assert reads == read, hours
        assert aged.out != first.out and code.encode() in aged.out
        expect = fresh(later)
        assert (aged.out, aged.counts, aged.files) == (expect.out, expect.counts, expect.files)
        cli_check._summarised_store_part(root, ctx, None, "text")  # the summary of the first moment again


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_cli_check_of_a_store_without_findings_prints_nothing_twice(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "memory"
    write(root, "prefs/p.md", memory("preference", "# Tabs\n\nTabs, not spaces.\n"))
    env = {**os.environ, "HOME": str(tmp_path), "KIN_MEMORY_DIR": str(root)}
    outs = [
        subprocess.run(
            [sys.executable, "-m", "kin_memory", "check", "--format", fmt],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )  # fmt: skip
        for _ in range(2)
    ]
    for out in outs:
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        assert (json.loads(out.stdout) == []) if fmt == "json" else out.stdout == ""


def test_answers_read_a_batch_at_a_time_are_the_whole_lookup(store: Path) -> None:
    """A big start reads the cache a batch at a time (never every payload at once): the same answers
    and the same gone files as one read of everything."""
    from kin_memory.caches.findings import variant_key
    from kin_memory.store.freshness import seen_at

    ctx = Context(root=store)
    check(store, ctx)
    (store / "prefs" / "p.md").unlink()
    stats = {v: s for p, v in files_of(store) if (s := seen_at(p)) is not None}
    cache = FindingsCache.open(store)
    assert cache is not None
    try:
        variant = variant_key(ctx, "test")
        whole = cache.lookup(variant, stats, ctx.now)
        batches = list(cache.lookup_batches(variant, stats, ctx.now, batch=1))
        assert len(batches) == 4  # one entry each, the gone file's included
        assert {v: a for hits, _ in batches for v, a in hits.items()} == whole[0] and len(whole[0]) == 3
        assert [v for _, gone in batches for v in gone] == whole[1] == ["/memories/prefs/p.md"]
    finally:
        cache.close()


def test_checking_a_few_files_again_keeps_every_other_entry(store: Path) -> None:
    """`kin-memory check` brings an aged file up to date alone: the other files' entries are not taken
    for gone (they answer the next whole check)."""
    from kin_memory.caches.findings import entries_of_this_code

    ctx = Context(root=store)
    check(store, ctx)
    assert entries_of_this_code(store) == 4
    few = [(p, v) for p, v in files_of(store) if v.endswith("/e.md")]
    cache = FindingsCache.open(store)
    assert cache is not None
    try:
        redo = check_files(few, ctx, "test", render, cache, all_files=False)
        assert redo is not None and redo.hits == 1 and redo.gone == []
        redo.write_back(cache, ctx.now)
    finally:
        cache.close()
    assert entries_of_this_code(store) == 4
    assert check(store, ctx)[1] == 4  # every file answered by the cache


def test_a_cache_locked_by_another_process_is_left_alone(store: Path, monkeypatch) -> None:
    """Another server (a second editor window) holding the database is not corruption: this check goes
    without the cache, and the cache, with everything in it, is there once the lock is gone."""
    import sqlite3

    import kin_memory.caches.findings as cache_module

    ctx = Context(root=store)
    check(store, ctx)
    db = store / HIDDEN_DIR / DB_NAME
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO meta VALUES ('held', 'yes')")
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT", 0.1)
    try:
        out, hits = check(store, ctx)
        assert hits == 0 and out == fresh(store, ctx)  # answered without the cache
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert check(store, ctx)[1] == 4  # every entry still there
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'held'").fetchone() == ("yes",)


def test_a_cache_of_another_format_is_made_again_under_processes_that_have_it_open(store: Path) -> None:
    """A start's workers all meet an older cache at once: it is made again in place, one of them doing
    it in a transaction, never deleted from under the others (which corrupted the new one)."""
    import multiprocessing
    import sqlite3

    (store / HIDDEN_DIR).mkdir(mode=0o700)
    db = store / HIDDEN_DIR / DB_NAME
    old = sqlite3.connect(db)
    old.execute("PRAGMA journal_mode=WAL")
    old.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    old.execute("INSERT INTO meta VALUES ('format', '1')")
    old.execute("CREATE TABLE entries (variant TEXT, vpath TEXT, payload BLOB)")
    old.executemany(
        "INSERT INTO entries VALUES ('v', ?, zeroblob(20000))", [(f"/m/{i}",) for i in range(200)]
    )
    old.commit()
    old.close()
    inode = db.stat().st_ino
    ctx = Context(root=store)
    fork = multiprocessing.get_context("fork")
    barrier = fork.Barrier(4)

    def worker() -> None:
        barrier.wait(10)
        for _ in range(5):
            check(store, ctx)

    procs = [fork.Process(target=worker) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert db.stat().st_ino == inode  # the same file, made again, never unlinked
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    assert check(store, ctx) == (fresh(store, ctx), 4)


def test_processes_opening_a_new_cache_at_once_all_get_it(tmp_path: Path) -> None:
    """A start's workers open the findings cache at the same moment, the first time it is made. SQLite
    refuses one of two switches to write-ahead mode at once, without waiting; that worker then ran
    without the cache and wrote no snapshot for the next start (about one start in ten)."""
    refused = 0
    for trial in range(40):
        root = tmp_path / f"store{trial}"
        (root / HIDDEN_DIR).mkdir(parents=True)
        pids = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child reports by its exit code
                cache = FindingsCache.open(root)
                os._exit(0 if cache is not None else 1)
            pids.append(pid)
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            refused += os.waitstatus_to_exitcode(status) != 0
    assert refused == 0


def test_a_new_cache_is_made_with_large_pages_and_a_made_one_keeps_its_own(tmp_path: Path) -> None:
    """A split check's halves insert their entries interleaved in key order: larger pages split less.
    A cache made before keeps the page size it was made with (it is not made again for that)."""
    import sqlite3

    from kin_memory.caches.findings import PAGE_SIZE

    new_root = tmp_path / "new"
    new_root.mkdir()
    cache = FindingsCache.open(new_root)
    assert cache is not None
    assert cache.conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 16384
    cache.close()
    old_root = tmp_path / "old"
    (old_root / HIDDEN_DIR).mkdir(parents=True)
    made = sqlite3.connect(old_root / HIDDEN_DIR / DB_NAME)
    made.execute("PRAGMA page_size=4096")
    made.execute("CREATE TABLE other (x)")  # another format's: the cache's tables are made in its place
    made.commit()
    made.close()
    cache = FindingsCache.open(old_root)
    assert cache is not None
    assert cache.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert cache.conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 0
    cache.close()
