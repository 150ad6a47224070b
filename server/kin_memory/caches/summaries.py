"""Whole-store check summaries (cli/check_summary.py's packed output), kept as files in the hidden folder.

A summary is megabytes (4.5 MB for a 10k store, ten times that at 100k). As a file it is written in a
few milliseconds and read in less; as a row of the findings cache it cost some 25 ms to write (through
the write-ahead log, queued behind the first check's entries) and up to 20 ms to read at 10k.

One file per key, `check-summary-<key>` (the key is a SHA-256 in hex): written whole under another name
and renamed over it (a reader has the old file or the new one, never a part of either), never through a
link, never read past MAX_BYTES. Kept a day, at most KEEP of them.

    {"since": …, "valid_until": …, "probes": {…}}\\n<the packed output>
"""

from __future__ import annotations

import json
import logging
import os
import string
import time
from pathlib import Path

from ..store.paths import HiddenRefused, open_hidden_dir, open_hidden_file

log = logging.getLogger("kin_memory.caches")

PREFIX = "check-summary-"
KEEP = 16  # summaries of other ways of asking (text or JSON, a subfolder, another folder asked from)
MAX_AGE = 86400.0  # seconds a summary is kept after it was written
MAX_BYTES = 1 << 30  # a summary larger than this is not one this code wrote
MAX_HEADER = 1 << 20
_HEX = frozenset(string.hexdigits)

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
        size = os.fstat(fd).st_size
        if size > MAX_BYTES:
            return None
        data = _read_all(fd, min(size, MAX_HEADER) if header_only else size)
    except OSError:
        return None
    finally:
        os.close(fd)
    saved = _parsed(data)
    return saved if saved is None or not header_only else (*saved[:3], b"")


def _read_all(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


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
    root: Path, key: str, since: float, valid_until: float, probes: dict[str, str], output: bytes
) -> None:
    """Keep `output` for `key` (replacing what was kept for it); the old and the surplus are removed.
    A failure leaves what was there."""
    if not _is_key(key):
        return
    head = json.dumps({"since": since, "valid_until": valid_until, "probes": probes}).encode() + b"\n"
    try:
        dir_fd = open_hidden_dir(root, create=True)
    except (OSError, HiddenRefused) as exc:
        log.info("check summary not kept: %s", exc)
        return
    part = f"{PREFIX}{key}.{os.getpid()}.part"
    try:
        fd = open_hidden_file(dir_fd, part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            for piece in (head, output):
                view = memoryview(piece)
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(part, PREFIX + key, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        _tidy(dir_fd, keep=PREFIX + key)
    except (OSError, HiddenRefused) as exc:
        log.info("check summary not kept: %s", exc)
        try:
            os.unlink(part, dir_fd=dir_fd)
        except OSError:
            pass
    finally:
        os.close(dir_fd)


def _tidy(dir_fd: int, keep: str) -> None:
    """Remove summaries older than MAX_AGE and all but the KEEP newest (and parts left by a process that
    died writing one, once they are as old)."""
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
        elif not name.endswith(".part"):
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
