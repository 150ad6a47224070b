"""Whole-store check summaries (cli/check_summary.py's packed output), kept as files in the hidden folder.

A summary is megabytes (4.5 MB for a 10k store, ten times that at 100k). As a file it is written in a
few milliseconds and read in less; as a row of the findings cache it cost some 25 ms to write (through
the write-ahead log, queued behind the first check's entries) and up to 20 ms to read at 10k.

One file per key, `check-summary-<key>` (the key is a SHA-256 in hex): written as every file of the
store is (store.atomic: whole under another name and renamed over it, so a reader has the old file or
the new one, never a part), without syncs to the disk (a cache), never through a link, and read by the
bounded reader (store.reader), never past MAX_BYTES. Kept a day, at most KEEP of them.

    {"since": …, "valid_until": …, "probes": {…}}\\n<the packed output>
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..quiet_log import LazyLogger
from ..store.atomic import write_at
from ..store.paths import HiddenRefused, open_hidden_dir, open_hidden_file
from ..store.reader import Refused, read_fd

log = LazyLogger("kin_memory.caches")  # logging is imported only if something is said

PREFIX = "check-summary-"
KEEP = 16  # summaries of other ways of asking (text or JSON, a subfolder, another folder asked from)
MAX_AGE = 86400.0  # seconds a summary is kept after it was written
MAX_BYTES = 1 << 30  # a summary larger than this is not one this code wrote
MAX_HEADER = 1 << 20
_HEX = frozenset("0123456789abcdefABCDEF")

Saved = tuple[float, float, dict[str, str], bytes]  # since, valid until, probes, the packed output


def read(root: Path, key: str, header_only: bool = False) -> Saved | None:
    """The summary kept for `key`, None when there is none or it is not one this code wrote; with
    `header_only`, its output is left unread (b"")."""
    if not _is_key(key):
        return None
    try:
        dir_fd = open_hidden_dir(root)
    except (OSError, HiddenRefused):
        return None
    try:
        fd = open_hidden_file(dir_fd, PREFIX + key, os.O_RDONLY)
    except (OSError, HiddenRefused):
        return None
    finally:
        os.close(dir_fd)
    try:
        data = read_fd(fd, MAX_HEADER, truncate=True) if header_only else read_fd(fd, MAX_BYTES)
    except (OSError, Refused):
        return None
    finally:
        os.close(fd)
    saved = _parsed(data.data)
    return saved if saved is None or not header_only else (*saved[:3], b"")


def _parsed(data: bytes) -> Saved | None:
    end = data.find(b"\n", 0, MAX_HEADER)
    if end < 0:
        return None
    try:
        head = json.loads(data[:end])
        since, valid_until, probes = head["since"], head["valid_until"], head["probes"]
    except (ValueError, TypeError, KeyError):
        return None
    if not (
        isinstance(since, float | int) and isinstance(valid_until, float | int) and isinstance(probes, dict)
    ):
        return None
    return float(since), float(valid_until), probes, data[end + 1 :]


def write(
    root: Path,
    key: str,
    since: float,
    valid_until: float,
    probes: dict[str, str],
    output: bytes | list[bytes],
) -> None:
    """Keep `output` (bytes, or its parts in order) for `key` (replacing what was kept for it); the old
    and the surplus are removed. A failure leaves what was there."""
    if not _is_key(key):
        return
    head = json.dumps({"since": since, "valid_until": valid_until, "probes": probes}).encode() + b"\n"
    try:
        dir_fd = open_hidden_dir(root, create=True)
    except (OSError, HiddenRefused) as exc:
        log.info("check summary not kept: %s", exc)
        return
    try:
        write_at(
            dir_fd,
            PREFIX + key,
            [head, *output] if isinstance(output, list) else [head, output],
            durable=False,
        )
        _tidy(dir_fd, keep=PREFIX + key)
    except OSError as exc:
        log.info("check summary not kept: %s", exc)
    finally:
        os.close(dir_fd)


def _tidy(dir_fd: int, keep: str) -> None:
    """Remove summaries older than MAX_AGE and all but the KEEP newest."""
    now = time.time()
    found: list[tuple[float, str]] = []
    for name in os.listdir(dir_fd):
        if not name.startswith(PREFIX) or name == keep:
            continue
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if now - st.st_mtime > MAX_AGE:
            _remove(dir_fd, name)
        else:
            found.append((st.st_mtime, name))
    found.sort(reverse=True)
    for _, name in found[KEEP - 1 :]:
        _remove(dir_fd, name)


def _remove(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _is_key(key: str) -> bool:
    return 0 < len(key) <= 128 and all(ch in _HEX for ch in key)
