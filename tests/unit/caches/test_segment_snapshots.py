"""A warm start answers unchanged segments from their snapshot, and what it sends is exactly what a check
without any cache sends: after a file changed, after files aged, and when a snapshot was tampered with."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from kin_memory.caches.findings import FindingsCache
from kin_memory.caches.segments import SEGMENTS, segment_of
from kin_memory.caches.snapshot_records import SnapshotRecords
from kin_memory.lsp.startup.shards import JsonRecords, ShardResult, _check
from kin_memory.store.context import Context
from kin_memory.store.freshness import key_of
from kin_memory.store.paths import HIDDEN_DIR
from kin_memory.store.store import scan_names
from support.memfiles import memory, write

DAY = 86400.0


def build(root: Path, n: int = 300) -> None:
    for k in range(n):
        category = ("preference", "bogus-category", "project-fact", "episodic")[k % 4]
        path = write(root, f"notes/m{k:03}.md", memory(category, f"# M{k}\n\ntext {k}\n"))
        if k % 3 == 0:  # old files: their age is in their findings, which move on day by day
            old = time.time() - (30 + k) * DAY
            os.utime(path, (old, old))


def frames_by_uri(blob: bytes) -> dict[str, str]:
    out, pos = {}, 0
    while pos < len(blob):
        stop = blob.index(b"\r\n\r\n", pos)
        length = int(blob[pos + len(b"Content-Length: ") : stop])
        body = json.loads(blob[stop + 4 : stop + 4 + length])
        out[body["params"]["uri"]] = json.dumps(body["params"]["diagnostics"], sort_keys=True)
        pos = stop + 4 + length
    return out


def check(root: Path, now: float, cache: bool = True) -> tuple[dict, ShardResult, list[str]]:
    """What a worker sends for the whole store at `now`: (diagnostics by URI, the result, chunk kinds);
    the write-back is done before returning, as a worker does after answering."""
    files = [
        (path, vpath, segment_of(vpath)) for path, vpath, is_index in scan_names(root)[0] if not is_index
    ]
    opened = FindingsCache.open(root) if cache else None
    chunks: list[tuple[str, object]] = []
    checked = _check(root, files, Context(root=root, now=now), "utf-16", (0, 1), opened, None,
                     lambda c: chunks.append(c) or True)  # fmt: skip
    assert checked is not None
    result, rest, write_back = checked
    chunks += list(rest())
    write_back()
    if opened is not None:
        opened.close()
    kept = SnapshotRecords(root)  # one reader for every segment's records, closed below (64 held descriptors)
    published: dict[str, str] = {}
    records: dict[str, list] = {}
    sent: list[str] = []  # every URI a frame went out for: each once
    for kind, chunk in chunks:
        if kind == "frames":
            found = frames_by_uri(chunk[1])  # type: ignore[index]
            sent += found
            published.update(found)
        elif kind == "records":
            decoded = chunk.decoded()  # type: ignore[union-attr]
            records.update({vpath: [mtime, size, key, record] for vpath, mtime, size, key, record in decoded})
        elif kind == "segment":
            names, uris, frames, (variant, seg, listing), skip = chunk  # type: ignore[misc]
            found = frames_by_uri(frames)
            assert sorted(found) == sorted(uris.split("\0") if uris else [])
            sent += found
            published.update(found)
            rows = JsonRecords(names, (str(root), variant, seg, listing), frozenset(skip)).decoded(kept)
            assert all(record is not None for *_, record in rows)
            for vpath, mtime, size, key, _ in rows:  # the files' own (mtime, size, key), as on disk
                st = os.stat(root / vpath[len("/memories/") :])
                assert (mtime, size, key) == (st.st_mtime, st.st_size, key_of(st))
            records.update({vpath: [mtime, size, key, record] for vpath, mtime, size, key, record in rows})
    kept.close()
    assert len(sent) == len(set(sent)) == len(published)
    result.records = [[(v, *r) for v, r in sorted(records.items())]]
    # "segment-" for a segment sent less its aged files
    return published, result, [kind + ("-" if kind == "segment" and c[4] else "") for kind, c in chunks]  # type: ignore[index]


def same(a: tuple[dict, ShardResult, list[str]], b: tuple[dict, ShardResult, list[str]]) -> None:
    assert a[0] == b[0]
    assert sorted(a[1].listed) == sorted(b[1].listed) and a[1].hidden == b[1].hidden
    # A record's freshness key is its file's (checked in `check`): a copy of the store has other files.
    assert [[r[:3] + r[4:] for r in chunk] for chunk in a[1].records] == [
        [r[:3] + r[4:] for r in chunk] for chunk in b[1].records
    ]


def fresh(root: Path, now: float, tmp: Path) -> tuple[dict, ShardResult, list[str]]:
    """The same store checked by a copy of it that has no cache at all."""
    copy = tmp / "fresh"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(HIDDEN_DIR))
    published, result, kinds = check(copy, now, cache=False)
    prefix, here = copy.as_uri(), root.as_uri()
    result.listed = [(vpath, line) for vpath, line in result.listed]
    return {uri.replace(prefix, here, 1): d for uri, d in published.items()}, result, kinds


def test_an_unchanged_store_is_answered_by_its_snapshots(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    build(root)
    now = time.time()
    cold = check(root, now)
    assert "segment" not in cold[2]
    warm = check(root, now + 1)
    assert warm[2].count("segment") == len({k for k in range(SEGMENTS)} & segments_used(root))
    assert "records" not in warm[2] and warm[1].hits == 300
    same(warm, cold)
    same(warm, fresh(root, now + 1, tmp_path))


def segments_used(root: Path) -> set[int]:
    from kin_memory.caches.segments import segment_of

    return {segment_of(vpath) for _, vpath, is_index in scan_names(root)[0] if not is_index}


def test_a_changed_file_redoes_its_segment_only(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    build(root)
    now = time.time()
    check(root, now)
    write(root, "notes/m005.md", memory("bogus-other", "# Changed\n\nnew text\n"))
    warm = check(root, now + 2)
    assert warm[2].count("segment") == len(segments_used(root)) - 1
    same(warm, fresh(root, now + 2, tmp_path))
    again = check(root, now + 3)  # the redone segment has its snapshot again
    assert again[2].count("segment") == len(segments_used(root))


def test_files_that_aged_are_checked_again_and_the_rest_kept(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    build(root)
    now = time.time()
    check(root, now)
    cache = FindingsCache.open(root)
    assert cache is not None
    untils = sorted(
        e[1] for (files,) in cache.conn.execute("SELECT files FROM segments") for e in json.loads(files)
    )
    cache.close()
    assert untils[0] < untils[1]
    later = (
        untils[0] + 1
    )  # the first file' findings have moved on: checked again, the rest of their segment kept
    warm = check(root, later)
    assert "segment-" in warm[2] and "records" in warm[2]
    same(warm, fresh(root, later, tmp_path))
    much_later = now + 1.5 * DAY  # most old files aged: their segments are checked again whole
    same(check(root, much_later), fresh(root, much_later, tmp_path))


def test_the_workers_compare_the_recall_index_by_its_seals(tmp_path: Path) -> None:
    from kin_memory.recall.service import Recall

    root = tmp_path / "memory"
    build(root)
    now = time.time()
    assert check(root, now)[1].recall is None  # no index yet: nothing said
    recall = Recall(root)
    recall.sync_disk()
    assert check(root, now)[1].recall == (300, 0, [])  # current, compared row by row (no seals yet)
    recall.index.seal()
    assert check(root, now + 1)[1].recall == (300, 0, [])  # current, by the seals
    write(root, "notes/m007.md", memory("preference", "# Changed\n\nother text\n"))
    write(root, "notes/new.md", memory("preference", "# New\n\nnew text\n"))
    matched, changed, named = check(root, now + 2)[1].recall  # type: ignore[misc]
    assert (matched, changed, sorted(named)) == (
        300,
        2,
        ["/memories/notes/m007.md", "/memories/notes/new.md"],
    )


def test_a_tampered_snapshot_is_not_used(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    build(root)
    now = time.time()
    check(root, now)
    cache = FindingsCache.open(root)
    assert cache is not None
    segs = [seg for (seg,) in cache.conn.execute("SELECT seg FROM segments ORDER BY seg")]
    cache.conn.execute("UPDATE segments SET frames = CAST('Content-Length: 5\r\n\r\n{}' AS BLOB) WHERE seg = ?",
                       (segs[0],))  # fmt: skip
    cache.conn.execute("UPDATE segments SET files = '[1, 2]', uris = 'file:///x' WHERE seg = ?", (segs[1],))
    cache.conn.execute("UPDATE segments SET listed = 'not json' WHERE seg = ?", (segs[2],))
    cache.conn.execute('UPDATE segments SET probes = \'[["/x", "y"]]\' WHERE seg = ?', (segs[3],))
    cache.close()
    warm = check(root, now + 1)
    assert warm[2].count("segment") == len(segs) - 4
    same(warm, fresh(root, now + 1, tmp_path))


@pytest.mark.parametrize("scratch", ["memory", "file", "none"])
def test_a_cold_check_writes_its_segments_after_the_answer(tmp_path: Path, monkeypatch, scratch: str) -> None:
    """A worker makes its snapshots once the server has its answer (the write-back): the entries wait in
    memory (a few), in a scratch file of the hidden folder (more), or, when no scratch file can be made,
    are made snapshots as their segments are done (one segment's entries held at a time). After the
    write-back every segment is kept. The check sends what a check without a cache sends, and so does
    the warm start that follows."""
    import tempfile

    import kin_memory.lsp.startup.shards.snapshots as snapshots
    import kin_memory.lsp.startup.shards.spill as spill

    monkeypatch.setattr(snapshots, "SNAPSHOTS_HELD", 0)  # each segment written the moment it is made
    monkeypatch.setattr(spill, "HELD", 1000 if scratch == "memory" else 30)
    made: list[object] = []
    scratch_file = tempfile.TemporaryFile

    def temporary_file(**kw):  # noqa: ANN003, ANN202
        if scratch == "none":
            raise OSError(28, "No space left on device")
        made.append(kw["dir"])
        return scratch_file(**kw)

    monkeypatch.setattr(spill.tempfile, "TemporaryFile", temporary_file)
    root = tmp_path / "memory"
    build(root, 400)
    now = time.time()
    files = [
        (path, vpath, segment_of(vpath)) for path, vpath, is_index in scan_names(root)[0] if not is_index
    ]
    cache = FindingsCache.open(root)
    assert cache is not None
    chunks: list[tuple[str, object]] = []
    checked = _check(root, files, Context(root=root, now=now), "utf-16", (0, 1), cache, None,
                     lambda c: chunks.append(c) or True)  # fmt: skip
    assert checked is not None
    sent: dict[str, str] = {}
    for kind, chunk in [*chunks, *checked[1]()]:
        if kind == "frames":
            sent.update(frames_by_uri(chunk[1]))  # type: ignore[index]
    assert sent == check(root, now, cache=False)[0]  # what the editor gets, wherever the entries wait
    every = {seg for _, _, seg in files}
    assert len(every) > SEGMENTS // 2
    written = committed_segments(root)
    assert written == (every if scratch == "none" else set())  # "none": each done as its files came
    assert made == ([root / HIDDEN_DIR] if scratch == "file" else [])
    assert not [name for name in os.listdir(root / HIDDEN_DIR) if name.startswith("spill")]  # it has no name
    checked[2]()  # the write-back: the rest
    assert committed_segments(root) == every
    warm, result, kinds = check(root, now)
    assert set(kinds) == {"segment"} and result.hits == 400
    assert warm == check(root, now, cache=False)[0]


def committed_segments(root: Path) -> set[int]:
    """The segments whose snapshot another reader of the cache sees."""
    import sqlite3

    conn = sqlite3.connect(root / HIDDEN_DIR / "findings.sqlite3")
    try:
        return {seg for (seg,) in conn.execute("SELECT seg FROM segments")}
    finally:
        conn.close()


def kept_segments(root: Path) -> list[tuple]:
    import sqlite3

    conn = sqlite3.connect(root / HIDDEN_DIR / "findings.sqlite3")
    try:
        return conn.execute(
            "SELECT seg, count, listing, since, valid_until, probes, frames, files, records, listed, uris, "
            "hidden FROM segments ORDER BY seg"
        ).fetchall()
    finally:
        conn.close()


def test_a_first_check_reads_each_file_without_a_stat_first_and_keeps_the_same_snapshots(
    tmp_path: Path, monkeypatch
) -> None:
    """With nothing kept (no findings cache entry, no recall index) a worker does not stat its files
    before reading them: each file's (mtime, size) comes with its reading. Its snapshots are the ones a
    check that did stat them first (a recall index present) keeps, and the warm start after it sends
    what a check without a cache sends."""
    import kin_memory.lsp.startup.shards.check as shards
    from kin_memory.recall.peek import index_usable
    from kin_memory.recall.service import Recall

    stat_files = shards._stat_files

    def no_stat(files):  # noqa: ANN001, ANN202
        raise AssertionError("the files were stat'ed before they were read")

    root = tmp_path / "memory"
    build(root)
    now = time.time()
    monkeypatch.setattr(shards, "_stat_files", no_stat)
    first = check(root, now)
    without_stat = kept_segments(root)
    assert len(without_stat) > SEGMENTS // 2

    assert first[1].recall is None  # no index: nothing said, as when the files are stat'ed first
    shutil.rmtree(root / HIDDEN_DIR)
    Recall(root).sync_disk()
    assert index_usable(root)
    with pytest.raises(AssertionError, match="stat'ed"):
        check(root, now)
    monkeypatch.setattr(shards, "_stat_files", stat_files)
    (root / HIDDEN_DIR / "findings.sqlite3").unlink()
    for suffix in ("-wal", "-shm"):
        (root / HIDDEN_DIR / f"findings.sqlite3{suffix}").unlink(missing_ok=True)
    with_stat = check(root, now)
    assert kept_segments(root) == without_stat
    same(first, with_stat)
    warm = check(root, now + 1)
    assert set(warm[2]) == {"segment"}
    same(warm, fresh(root, now + 1, tmp_path))


def test_the_recall_comparison_is_told_before_any_file_and_names_what_is_gone(tmp_path: Path) -> None:
    """A worker tells how the recall index compares with its files before it sends any of them: the
    segments whose seal matched, the files of every other segment. From that alone the removed files
    are found, those of a segment that lost every file included."""
    from kin_memory.recall.peek import Lag
    from kin_memory.recall.service import Recall

    root = tmp_path / "memory"
    build(root)
    recall = Recall(root)
    recall.sync_disk()
    recall.index.seal()
    recall.index.close()
    files = [(p, v, segment_of(v)) for p, v, is_index in scan_names(root)[0] if not is_index]
    by_seg: dict[int, list[str]] = {}
    for _, vpath, seg in files:
        by_seg.setdefault(seg, []).append(vpath)
    emptied = min(by_seg, key=lambda s: len(by_seg[s]))  # every file of this segment removed
    removed = sorted(by_seg[emptied]) + ["/memories/notes/m007.md"]
    for vpath in removed:
        (root / vpath[len("/memories/") :]).unlink()
    write(root, "notes/new.md", memory("preference", "# New\n\nnew text\n"))

    files = [(p, v, segment_of(v)) for p, v, is_index in scan_names(root)[0] if not is_index]
    events: list[str] = []
    told: list = []

    def said(s: object) -> None:
        events.append("said")
        told.append(s)

    checked = _check(root, files, Context(root=root, now=time.time()), "utf-16", (0, 1),
                     FindingsCache.open(root), None, lambda c: events.append(c[0]) or True, said)  # fmt: skip
    assert checked is not None and events[0] == "said" and events.count("said") == 1
    (matched, changed, named), sealed, compared, count = told[0]
    assert (
        count == len(files) == 300 - len(removed) + 1 and changed == 1 and named == ["/memories/notes/new.md"]
    )
    changed_segs = {segment_of("/memories/notes/m007.md"), segment_of("/memories/notes/new.md")}
    assert set(compared) == changed_segs - {emptied} and not set(sealed) & (changed_segs | {emptied})
    assert set(sealed) | set(compared) == {seg for _, _, seg in files}
    lag = Lag(root)
    listed = {seg: set(names.split("\0")) for seg, names in compared.items()}
    assert sorted(lag.gone_from(set(sealed), listed) or []) == sorted(removed)
    lag.close()
