"""The findings cache: an unchanged store is checked with a stat per file.

Kept in the hidden folder (`.kin-index/findings.sqlite3`, like the recall index). For each file it holds
the compact form of its memory (what the server keeps of a closed file, see `store.memory.record_of`)
and what checking it produced, per *variant*: the check context (root, active workspaces, thresholds,
severity overrides), the form of the output (the language server's framed diagnostics in one position
encoding, or the CLI's findings) and the code version. An entry is used only while

- the file's freshness key (store/freshness.py) is the one it was computed from,
- the clock is before its `valid_until`: the next instant a lifecycle status or message can change
  (`store.lifecycle.next_change`), and
- its workspace stamp probes the same on disk (exists, is a folder, realpath, main worktree): the
  stamp findings (KM301, KM302, KM305) read the disk, not only the file.

Files are spread over shards by a hash of their virtual path, so the cold-start workers each read only
their own rows. A corrupt or foreign database is deleted and rebuilt; a linked or odd hidden folder
means no cache at all (the check just reads every file), never a write elsewhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import astuple
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import plain_json
from ..quiet_log import LazyLogger
from ..store.context import Context
from ..store.freshness import Seen, unchanged
from ..store.paths import (
    HIDDEN_DIR,
    HiddenRefused,
    hidden_file_problem,
    is_transient,
    open_hidden_dir,
    use_wal,
)
from ..store.workspace import machines_key

if TYPE_CHECKING:  # segments.py: the server's snapshots, imported where they are read (a check has none)
    from ..store.memory import Record
    from .segments import Snapshot

log = LazyLogger("kin_memory.findings")  # logging is imported only if something is said
BUSY_TIMEOUT = 5.0  # seconds a connection waits for another process's lock

DB_NAME = "findings.sqlite3"
DB_SUFFIXES = ("", "-wal", "-shm", "-journal")
FORMAT = "10"  # 10: check summaries are files of their own (summaries.py)
LOOKUP_BATCH = 500  # entries read and answered at a time (and vpaths asked in one query)
KEPT_VARIANTS = 6  # contexts remembered (workspaces, the CLI's and the server's forms), most recent first
_FRAME_HEAD = b"Content-Length: "
COUNT_KEY = "entries:"  # meta key prefix: how many entries a variant holds
PAGE_SIZE = 16384  # a split check's halves insert interleaved: fewer pages split (10k: 32 → 19 ms)


_code_version: str | None = None


def code_version() -> str:
    """The package version and a digest of its source files' (name, size, mtime): findings computed by
    other code are never reused, even between two builds of the same version."""
    global _code_version
    if _code_version is None:
        from .. import __version__

        package = Path(__file__).resolve().parent.parent
        digest = hashlib.sha256(__version__.encode())
        for folder, dirs, files in sorted(os.walk(package)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    digest.update(
                        f"{folder[len(str(package)) :]}/{name}:{st.st_size}:{st.st_mtime_ns};".encode()
                    )
        _code_version = digest.hexdigest()[:24]
    return _code_version


def variant_key(ctx: Context, form: str) -> str:
    """Everything besides the file that decides what its check produces, as one key (the machine files
    too: they decide whether another machine's path has gone quiet, KM301)."""
    parts = (
        code_version(),
        form,
        str(ctx.root),
        ctx.active,
        machines_key(ctx.root),
        astuple(ctx.thresholds),
        sorted(ctx.severity.items()),
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def stamp_probe(stamp: object, memo: dict[str, str]) -> str:
    """What the disk says about a path stamp, as the stamp findings read it, as a digest: the same probe
    means the same findings (only ever compared, and kept with every entry of the stamp, where the facts
    themselves were 130 bytes of a 500-byte row). Labels, `global` and non-strings read nothing from
    the disk: ""."""
    if not isinstance(stamp, str) or not stamp or not (stamp.startswith("/") or stamp.startswith("~")):
        return ""
    known = memo.get(stamp)
    if known is not None:
        return known
    from ..store.workspace import _git_toplevel, main_worktree

    parts = []
    for candidate in {stamp, os.path.expanduser(stamp)}:
        if os.path.isabs(candidate):
            real = os.path.realpath(candidate)
            is_dir = os.path.isdir(candidate)
            main = main_worktree(candidate) if is_dir else None
            top = _git_toplevel(real)  # KM307: a folder inside a repository
            parts.append(f"{candidate}|{os.path.exists(real)}|{real}|{is_dir}|{main}|{top}")
    facts = "\n".join(sorted(parts)).encode("utf-8", "surrogatepass")
    memo[stamp] = probe = hashlib.blake2b(facts, digest_size=12).hexdigest()
    return probe


class Entry(NamedTuple):
    """One file's cached check, as written (a named tuple: a cold start makes one per file, and a frozen
    dataclass costs five times as much to make)."""

    vpath: str
    mtime: float
    size: int
    key: int  # the file's freshness key when read (store/freshness.py)
    since: float  # the check's clock: the entry holds from then until valid_until
    valid_until: float
    probe: str
    record: Record | str  # the record, or already its JSON (pending entries of a big check are kept so)
    payload: bytes


class FindingsCache:
    def __init__(self, root: Path, conn: sqlite3.Connection) -> None:
        self.root = root
        self.conn = conn
        self.probes: dict[str, str] = {}

    # -- opening ----------------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path) -> FindingsCache | None:
        """The store's cache; None when there can be none (no store, a linked hidden folder, an
        unwritable disk): the caller then checks every file, as without a cache."""
        for attempt in (1, 2):
            try:
                return cls(root, _connect(root))
            except HiddenRefused as exc:
                log.info("findings cache off: %s", exc.reason)
                return None
            except sqlite3.DatabaseError as exc:  # corrupt or foreign: start again, once
                if attempt == 2 or is_transient(exc):  # locked by another process: never wiped
                    log.info("findings cache off: %s", exc)
                    return None
                log.info("findings cache discarded: %s", exc)
                _wipe(root)
            except OSError as exc:
                log.info("findings cache off: %s", exc)
                return None
        return None

    def without_syncs(self) -> None:
        """No sync to the disk on this connection's commits and checkpoints (a split first check's bulk
        write: 10,000 entries' checkpoint waited some 20 ms on them). A cache may lose its last writes
        when the machine stops; a file left unreadable then is discarded and made again (open)."""
        try:
            self.conn.execute("PRAGMA synchronous=OFF")
        except sqlite3.Error:
            pass

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()

    def checkpoint(self) -> None:
        """The log copied into the database now, as far as it can be (a split check's writers do: the
        caller's close then has little left to copy)."""
        try:
            self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            pass

    # -- reading ----------------------------------------------------------------------------------
    def lookup(
        self, variant: str, stats: dict[str, Seen], now: float, shard: tuple[int, int] = (0, 1)
    ) -> tuple[dict[str, tuple[Record, bytes, float]], list[str]]:
        """(vpath → (record, payload, valid until) for every file of `stats` whose entry still holds,
        vpaths of the shard's entries whose file is gone). Unreadable rows count as misses."""
        hits: dict[str, tuple[Record, bytes, float]] = {}
        gone: list[str] = []
        for more, left in self.lookup_batches(variant, stats, now, shard):
            hits.update(more)
            gone += left
        return hits, gone

    def lookup_batches(
        self,
        variant: str,
        stats: dict[str, Seen],
        now: float,
        shard: tuple[int, int] = (0, 1),
        batch: int = LOOKUP_BATCH,
        only: list[str] | None = None,
    ) -> Iterator[tuple[dict[str, tuple[Record, bytes, float]], list[str]]]:
        """lookup's answer a batch of entries at a time: a start of 100,000 files then never holds every
        payload at once. With `only`, just those files' entries are read (a few files checked again)
        and none is called gone. An error ends the batches (the files not answered yet are checked)."""
        index, count = shard
        columns = "SELECT vpath, key, since, valid_until, probe, record, payload FROM entries "
        try:
            if only is not None:
                for start in range(0, len(only), batch):
                    part = only[start : start + batch]
                    rows = self.conn.execute(
                        f"{columns} WHERE variant = ? AND vpath IN ({','.join('?' * len(part))})",
                        (variant, *part),
                    ).fetchall()
                    yield self._answers(rows, stats, now)[0], []
                return
            from .segments import SEGMENTS

            cursor = self.conn.execute(
                f"{columns} WHERE variant = ? AND h % ? % ? = ?", (variant, SEGMENTS, count, index)
            )
            while rows := cursor.fetchmany(batch):
                yield self._answers(rows, stats, now)
        except sqlite3.Error as exc:
            log.info("findings cache unreadable: %s", exc)

    def _answers(
        self, rows: list[tuple[Any, ...]], stats: dict[str, Seen], now: float
    ) -> tuple[dict[str, tuple[Record, bytes, float]], list[str]]:
        hits: dict[str, tuple[Record, bytes, float]] = {}
        gone: list[str] = []
        fields_of = _decode_all([row[5] for row in rows])
        for (vpath, key, since, valid_until, probe, record, payload), fields in zip(
            rows, fields_of, strict=True
        ):
            seen = stats.get(vpath)
            if seen is None:
                gone.append(vpath)
                continue
            if not unchanged(key, seen.key) or not since <= now < valid_until:
                continue
            if fields is None:
                fields = _decode(record)
            if not (isinstance(fields, list) and len(fields) == 10 and _is_frame(payload)):
                continue
            if stamp_probe(fields[2], self.probes) != probe:
                continue
            hits[vpath] = (fields, bytes(payload), valid_until)
        return hits, gone

    def holds_any(self, variant: str) -> bool:
        """Whether anything is kept for this variant (an entry or a snapshot); True when unreadable."""
        try:
            row = self.conn.execute(
                "SELECT EXISTS (SELECT 1 FROM entries WHERE variant = ?) "
                "OR EXISTS (SELECT 1 FROM segments WHERE variant = ?)",
                (variant, variant),
            ).fetchone()
        except sqlite3.Error:
            return True
        return bool(row and row[0])

    # -- segment snapshots (see segments.py) -------------------------------------------------------
    def segments(self, variant: str, segs: Iterable[int]) -> dict[int, Snapshot]:
        """The kept snapshots of these segments, without their records (see `segment_records`);
        unreadable rows are left out: checked file by file."""
        wanted = sorted(set(segs))
        if not wanted:
            return {}
        try:
            rows = self.conn.execute(
                f"SELECT {_SNAPSHOT_COLUMNS} FROM segments WHERE variant = ? AND seg IN "
                f"({','.join('?' * len(wanted))})",
                (variant, *wanted),
            ).fetchall()
        except sqlite3.Error as exc:
            log.info("findings cache unreadable: %s", exc)
            return {}
        found: dict[int, Snapshot] = {}
        for row in rows:
            snap = _snapshot(row)
            if snap is not None:
                found[snap.seg] = snap
        return found

    def put_segments(self, variant: str, snapshots: Iterable[Snapshot], stale: Iterable[int] = ()) -> None:
        """Keep these snapshots (replacing the segments' older ones) and drop the `stale` segments'."""
        rows = [
            (variant, s.seg, s.count, s.listing, s.since, s.valid_until, json.dumps(s.probes), s.frames,
             s.files, s.records, s.listed, s.uris, s.hidden)
            for s in snapshots
        ]  # fmt: skip
        try:
            with self.conn:
                self.conn.execute("BEGIN IMMEDIATE")
                self.conn.executemany(
                    "DELETE FROM segments WHERE variant = ? AND seg = ?", ((variant, seg) for seg in stale)
                )
                self.conn.executemany(f"INSERT OR REPLACE INTO segments VALUES ({','.join('?' * 13)})", rows)
        except sqlite3.Error as exc:
            log.info("findings cache not written: %s", exc)

    # -- whole-store summaries ----------------------------------------------------------------------
    # What a whole check printed, keyed by everything it depended on (the variant, how it was asked,
    # and every file's (vpath, freshness key)): an unchanged store is then answered with a stat per file.
    # A summary is kept whole while files' messages age ("expires … in 22 hours"): its caller redoes
    # only the files whose own part of it has passed its validity.
    def summary(self, key: str, now: float) -> bytes | None:
        """The packed output kept for `key` (see summaries.py), when it began before `now` and every
        stamp's disk facts are what they were then."""
        from . import summaries

        saved = summaries.read(self.root, key)
        if saved is None or not saved[0] <= now:
            return None
        if any(stamp_probe(s, self.probes) != p for s, p in saved[2].items()):
            return None
        return saved[3]

    def summary_probes(self, key: str) -> dict[str, str]:
        """The stamps' disk facts kept with `key`'s summary ({} when there is none)."""
        from . import summaries

        saved = summaries.read(self.root, key, header_only=True)
        return {} if saved is None else saved[2]

    def put_summary(
        self, key: str, since: float, valid_until: float, probes: dict[str, str], output: bytes | list[bytes]
    ) -> None:
        from . import summaries

        summaries.write(self.root, key, since, valid_until, probes, output)

    # -- writing ----------------------------------------------------------------------------------
    def store(
        self, variant: str, entries: Iterable[Entry | tuple], now: float, gone: Iterable[str] = ()
    ) -> None:
        """Write entries (an Entry or its plain tuple each, replacing older ones of the same files) and forget files that are gone; keeps
        the most recently used variants only. A failure leaves the cache as it was."""
        # In key order: a check's files come segment by segment, scattered over the table (5,000: 67 → 37 ms).
        rows = sorted(_rows(variant, entries), key=itemgetter(1))
        gone = list(gone)
        try:
            with self.conn:
                self.conn.execute("BEGIN IMMEDIATE")
                self.conn.executemany(
                    "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
                )
                self.conn.executemany(
                    "DELETE FROM entries WHERE variant = ? AND vpath = ?", ((variant, v) for v in gone)
                )
                self.conn.execute("INSERT OR REPLACE INTO variants VALUES (?, ?)", (variant, now))
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('code', ?)", (code_version(),))
                # Kept beside the entries: a start asks it before forking (counting them reads the table).
                (count,) = self.conn.execute(
                    "SELECT count(*) FROM entries WHERE variant = ?", (variant,)
                ).fetchone()
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)", (COUNT_KEY + variant, str(count))
                )
                old = [
                    v
                    for (v,) in self.conn.execute(
                        "SELECT variant FROM variants ORDER BY used DESC LIMIT -1 OFFSET ?", (KEPT_VARIANTS,)
                    )
                ]
                for v in old:
                    self.conn.execute("DELETE FROM entries WHERE variant = ?", (v,))
                    self.conn.execute("DELETE FROM segments WHERE variant = ?", (v,))
                    self.conn.execute("DELETE FROM variants WHERE variant = ?", (v,))
                    self.conn.execute("DELETE FROM meta WHERE key = ?", (COUNT_KEY + v,))
        except sqlite3.Error as exc:
            log.info("findings cache not written: %s", exc)


_SNAPSHOT_COLUMNS = "seg, listing, since, valid_until, probes, frames, files, listed, count, uris, hidden"


def _snapshot(row: tuple[Any, ...]) -> Snapshot | None:
    """A snapshot row as kept (its records left out), None when any part of it is not what this code
    writes."""
    from .segments import SEGMENTS, Snapshot

    seg, listing, since, valid_until, probes, frames, files, listed, count, uris, hidden = row
    records = ""
    try:
        probes = json.loads(probes)
    except (ValueError, TypeError, RecursionError):
        return None
    plain = (
        isinstance(seg, int) and 0 <= seg < SEGMENTS and isinstance(listing, bytes)
        and isinstance(since, float) and isinstance(valid_until, float)
        and isinstance(probes, list) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in probes
        )
        and isinstance(frames, bytes) and isinstance(files, str) and isinstance(records, str)
        and isinstance(listed, str) and isinstance(count, int) and isinstance(uris, str)
        and isinstance(hidden, int)
    )  # fmt: skip
    if not plain:
        return None
    return Snapshot(
        seg, listing, since, valid_until, probes, frames, files, records, listed, count, uris, hidden
    )


def _rows(variant: str, entries: Iterable[Entry | tuple]) -> Iterator[tuple[object, ...]]:
    # By position: an Entry, or one as a plain tuple (as a split check's Writer is handed them).
    for vpath, mtime, size, key, since, valid_until, probe, record, payload in entries:
        text = record if isinstance(record, str) else record_text(record)
        if text is None:
            continue  # not plain values: that file is read again next time
        crc = zlib.crc32(vpath.encode("utf-8", "surrogatepass"))
        yield (variant, vpath, crc, mtime, size, key, since, valid_until, probe, text, payload)


# One encoder for every record: `json.dumps` makes a new one per call (half its cost).
_RECORD_ENCODE = plain_json.dumps_finite


def record_text(record: Record) -> str | None:
    """A record as the cache stores it; None when it holds anything but plain values."""
    try:
        return _RECORD_ENCODE(record)
    except (TypeError, ValueError):
        return None


def _decode_all(records: list[str]) -> list[object | None]:
    """Every row's record in one JSON parse (a call per row costs more than the rest of a lookup); None
    for each when any is unreadable or not text, to be decoded one by one."""
    if all(isinstance(r, str) for r in records):
        try:
            decoded = json.loads("[" + ",".join(records) + "]")
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, list) and len(decoded) == len(records):
            return decoded
    return [None] * len(records)


def _decode(record: object) -> object:
    try:
        return json.loads(record) if isinstance(record, str) else None
    except (ValueError, RecursionError):
        return None


def _is_frame(payload: object) -> bool:
    """An empty payload (no findings), JSON findings (the CLI's form) or one whole framed message."""
    if not isinstance(payload, bytes):
        return False
    if not payload or payload[:1] == b"[":
        return True
    if not payload.startswith(_FRAME_HEAD):
        return False
    head, sep, body = payload.partition(b"\r\n\r\n")
    return bool(sep) and head[len(_FRAME_HEAD) :].isdigit() and int(head[len(_FRAME_HEAD) :]) == len(body)


# -- the database file ------------------------------------------------------------------------------


def entries_of_this_code(root: Path, variants: Iterable[str] | None = None) -> int:
    """How many entries the store's cache holds when it was last written by this code (0 otherwise),
    of these variants when given: a start can then expect to answer most files from it (entries the
    CLI wrote, or another context's, answer nothing for it). Read-only, no connection kept: safe to
    ask before forking."""
    if hidden_file_problem(root, DB_NAME) is not None:
        return 0
    path = os.path.join(root, HIDDEN_DIR, DB_NAME)
    if not os.path.isfile(path):
        return 0
    try:
        from urllib.parse import quote  # here: every `check` imports this module, few ask this

        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error:
        return 0
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'code'").fetchone()
        if not row or row[0] != code_version():
            return 0
        # The counts written with the entries (see store): counting them here would read the whole table.
        counts = conn.execute("SELECT key, value FROM meta WHERE key LIKE ?", (COUNT_KEY + "%",)).fetchall()
        kept = conn.execute("SELECT variant, sum(count) FROM segments GROUP BY variant").fetchall()
    except sqlite3.Error:
        return 0
    finally:
        conn.close()
    asked = None if variants is None else set(variants)
    entries = sum(
        int(value)
        for key, value in counts
        if (asked is None or key[len(COUNT_KEY) :] in asked) and str(value).isdigit()
    )
    # A cold start keeps its segments' snapshots only (see lsp/startup/shards/): their files count too.
    in_snapshots = sum(int(n) for v, n in kept if (asked is None or v in asked) and isinstance(n, int))
    return max(entries, in_snapshots)


def _check_place(root: Path) -> None:
    os.close(open_hidden_dir(root, create=True))
    for suffix in DB_SUFFIXES:
        problem = hidden_file_problem(root, DB_NAME + suffix)
        if problem is not None:
            raise HiddenRefused(problem)


def _connect(root: Path) -> sqlite3.Connection:
    _check_place(root)
    conn = sqlite3.connect(
        os.path.join(root, HIDDEN_DIR, DB_NAME), timeout=BUSY_TIMEOUT, isolation_level=None
    )
    try:
        use_wal(conn, PAGE_SIZE)
        if not _tables(conn):
            _create(conn)
        elif not _this_format(conn):
            # Made again in place, in a transaction: deleting the files would pull them from under the
            # other processes that have them open (a start's workers all meet the old format at once),
            # which corrupts the new database.
            _create(conn, replace=True)
        os.chmod(os.path.join(root, HIDDEN_DIR, DB_NAME), 0o600)
    except BaseException:
        conn.close()
        raise
    return conn


TABLES = {"meta", "entries", "variants", "segments", "listing"}


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
    return {name for (name,) in rows}


def _this_format(conn: sqlite3.Connection) -> bool:
    if _tables(conn) != TABLES:
        return False
    row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    return bool(row) and row[0] == FORMAT


def _create(conn: sqlite3.Connection, replace: bool = False) -> None:
    """The cache's tables in an empty database; with `replace`, in place of another format's."""
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        if replace:
            if _this_format(conn):
                return  # another process made it again meanwhile
            for name in _tables(conn):
                conn.execute(f'DROP TABLE "{name}"')
        elif _tables(conn):
            return  # another process made it meanwhile
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute(
            "CREATE TABLE entries (variant TEXT, vpath TEXT, h INTEGER, mtime REAL, size INTEGER, key INTEGER, since REAL, "
            "valid_until REAL, probe TEXT, record TEXT, payload BLOB, PRIMARY KEY (variant, vpath)) WITHOUT ROWID"
        )
        conn.execute("CREATE TABLE variants (variant TEXT PRIMARY KEY, used REAL)")
        conn.execute(
            # `count` before the large columns: summed without reading them (see entries_of_this_code)
            "CREATE TABLE segments (variant TEXT, seg INTEGER, count INTEGER, listing BLOB, since REAL, "
            "valid_until REAL, probes TEXT, frames BLOB, files TEXT, records TEXT, listed TEXT, uris TEXT, hidden INTEGER, "
            "PRIMARY KEY (variant, seg)) WITHOUT ROWID"
        )
        # The store's listing as a scan saw it, a segment's vpaths a row (see kept_listing.py).
        conn.execute("CREATE TABLE listing (seg INTEGER PRIMARY KEY, files TEXT)")
        conn.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))


def _wipe(root: Path) -> None:
    try:
        dir_fd = open_hidden_dir(root)
    except OSError:
        return
    try:
        for suffix in DB_SUFFIXES:
            try:
                os.unlink(DB_NAME + suffix, dir_fd=dir_fd)
            except OSError:
                pass
    finally:
        os.close(dir_fd)
