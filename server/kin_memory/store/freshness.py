"""The one rule for "this is the file a cache saw", used by every cache of the product.

A cache keeps, with what it computed from a file, the file's *key*: a digest of (mtime_ns, size, ctime_ns,
inode) taken from the stat of the reading. The file is unchanged while its key stays the same.

- mtime and size alone are not enough: `tar -x`, `rsync -t`, `cp -p` and sync clients rewrite a file at
  the same size and put its old mtime back. Nothing can set a ctime back (every write, `utime` and rename
  moves it), and a file replaced by a rename has another inode.
- A filesystem that stamps whole seconds (its ctimes end in nine zeros) can change a file again within the
  second of a reading without its key moving. Such a reading within RACY_COARSE of the file's last change
  is kept with UNSURE, a key no file has, so the next look reads the file again (the "racy" case git
  knows). Where stamps have nanoseconds the window is the kernel's clock tick, a few milliseconds, and a
  write in it still reaches the server through the watcher; a reading is kept as it is.

Folders follow the same rule through their ctime (which moves whenever an entry is added, removed or
renamed): a listing is trusted for a folder whose ctime is the one it saw and was old enough then.
"""

from __future__ import annotations

import os
import struct
from hashlib import blake2b
from typing import NamedTuple

Key = int
UNSURE: Key = 0  # never the key of a file: what is kept of a reading too close to the file's last change
NS = 1_000_000_000
RACY_FINE = 0.05  # seconds a change must precede a reading for the reading to be trusted
RACY_COARSE = 2.0  # the same where the filesystem stamps whole seconds
_PACK = struct.Struct("<qqqq")
_WIDE = struct.Struct("<QQQQ")
_WORD = (1 << 64) - 1


def key_of(st: os.stat_result) -> Key:
    """The file's key now (a signed 64-bit integer, as SQLite stores it; never UNSURE).

    Any stat is accepted: a time after 2262 (beyond 64 signed bits of nanoseconds, which a synced or
    unpacked file can carry) is taken modulo 2**64, the same bytes a time in range packs to, so it still
    names the file and never raises."""
    try:
        packed = _PACK.pack(st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    except struct.error:
        packed = _WIDE.pack(
            st.st_mtime_ns & _WORD, st.st_size & _WORD, st.st_ctime_ns & _WORD, st.st_ino & _WORD
        )
    digest = blake2b(packed, digest_size=8)
    return int.from_bytes(digest.digest(), "little", signed=True) or 1


def key_at(path: str | os.PathLike[str]) -> Key | None:
    """The key of the file at `path` (links followed, as a scan reads them), None when it cannot be stat'ed."""
    try:
        return key_of(os.stat(path))
    except OSError:
        return None


def racy(ctime_ns: int) -> float:
    """The seconds a change (its ctime in ns) must precede a reading for the reading to be trusted."""
    return RACY_FINE if ctime_ns % NS else RACY_COARSE


def trusted(ctime_ns: int, read_at: float) -> bool:
    """Whether a folder (or a file of a whole-second filesystem) last changed at `ctime_ns` was seen as it
    is by a reading begun at `read_at`."""
    return ctime_ns < int((read_at - racy(ctime_ns)) * NS)


def kept_key(st: os.stat_result, read_at: float) -> Key:
    """What a cache keeps of a reading begun at `read_at` (epoch seconds) whose stat is `st`."""
    if st.st_ctime_ns % NS == 0 and not trusted(st.st_ctime_ns, read_at):
        return UNSURE
    return key_of(st)


def unchanged(kept: Key | None, now: Key | None) -> bool:
    """Whether a file whose kept key is `kept` is, with key `now`, the file the cache saw."""
    return kept is not None and now is not None and kept != UNSURE and kept == now


class Seen(NamedTuple):
    """What a stat of a file says, as the caches use it: mtime and size (to remake a memory from a kept
    record: its age, its size) and the key that says whether it is the file they saw."""

    mtime: float
    size: int
    key: Key


def seen_of(st: os.stat_result) -> Seen:
    return Seen(st.st_mtime, st.st_size, key_of(st))


def seen_at(path: str | os.PathLike[str]) -> Seen | None:
    """What a stat of the file at `path` says now (links followed), None when it cannot be stat'ed."""
    try:
        return seen_of(os.stat(path))
    except OSError:
        return None
