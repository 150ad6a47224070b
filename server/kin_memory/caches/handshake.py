"""The remembered answers to the editor's first request, kept per client in the user's cache folder.

What is kept depends only on this code and on what the client said of itself, not on the store: so it
lives in $XDG_CACHE_HOME/kin-memory (else ~/.cache/kin-memory), under a digest of both (`key_for`). A
file from another build never matches (the digest covers the code). The file is never read through a
link nor past MAX_BYTES, nor in a folder others may write in; one not exactly of the shape `remember`
writes, or holding an answer the caller's `valid` refuses, is ignored as a whole. What makes an answer
valid is the caller's to say (the language server's rule lives with it): this module only keeps bytes
safely. Deleting the file only costs the next start a few tenths of a second.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from .findings import code_version

log = logging.getLogger("kin_memory.caches")

FILE_NAME = "handshake.json"
KEPT = 4  # clients remembered (VS Code, Neovim, ...), most recent first
MAX_BYTES = 64 * 1024  # an answer is about 2 KB
Valid = Callable[[object], bool]  # whether a kept answer may be used at all
_KEY = re.compile(r"[0-9a-f]{32}")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def key_for(said: object) -> str | None:
    """The digest of this code and what the client said (any JSON); None when it is not JSON."""
    try:
        text = json.dumps(said, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(f"{code_version()}\n{text}".encode()).hexdigest()[:32]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kin-memory"


def remembered(key: str, valid: Valid) -> object | None:
    """The answer kept under this key, when the whole file is what `remember` writes and every answer in
    it is `valid`; otherwise None."""
    for entry in _read(valid):
        if entry["key"] == key:
            return entry["result"]
    return None


def remember(key: str, result: object, valid: Valid) -> None:
    """Keep this answer under this key (the most recent KEPT keys); failures only cost speed."""
    if _KEY.fullmatch(key) is None or not valid(result):
        return  # not what the next start would take
    entries = [{"key": key, "result": result}]
    entries += [e for e in _read(valid) if e.get("key") != key][: KEPT - 1]
    data = json.dumps({"entries": entries}).encode()
    if len(data) > MAX_BYTES:
        return
    try:
        fd = _open_dir(create=True)
    except OSError:
        return
    try:
        _write(fd, data)
    finally:
        os.close(fd)


def _write(fd: int, data: bytes) -> None:
    """The file replaced at once (a reader sees the old one or the new one, never half of it)."""
    temp = f".{FILE_NAME}.{os.getpid()}.tmp"
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW
        file_fd = os.open(temp, flags, 0o600, dir_fd=fd)
        with os.fdopen(file_fd, "wb") as f:
            f.write(data)
        os.replace(temp, FILE_NAME, src_dir_fd=fd, dst_dir_fd=fd)
    except OSError as exc:
        log.info("could not remember the initialize answer: %s", exc)
        try:
            os.unlink(temp, dir_fd=fd)
        except OSError:
            pass


def _open_dir(create: bool = False) -> int:
    """The cache folder, not through a link and only when it is this user's and no one else may write
    in it (OSError otherwise)."""
    folder = cache_dir()
    if create:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        os.close(fd)
        raise PermissionError(f"{folder} may be written by others")
    return fd


def _read(valid: Valid) -> list[dict]:
    """The entries, when the whole file is exactly what remember() writes; otherwise none."""
    try:
        fd = _open_dir()
    except OSError:
        return []
    try:
        # Never through a link, never blocking on a FIFO planted in its place.
        flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
        file_fd = os.open(FILE_NAME, flags, dir_fd=fd)
        with os.fdopen(file_fd, "rb") as f:
            raw = f.read(MAX_BYTES + 1) if stat.S_ISREG(os.fstat(file_fd).st_mode) else b"null"
        data = json.loads(raw) if len(raw) <= MAX_BYTES else None
    except (OSError, ValueError, RecursionError):
        return []
    finally:
        os.close(fd)
    entries = data.get("entries") if isinstance(data, dict) and set(data) == {"entries"} else None
    if not isinstance(entries, list) or len(entries) > KEPT or not all(_is_entry(e, valid) for e in entries):
        return []
    return entries


def _is_entry(entry: object, valid: Valid) -> bool:
    return (
        isinstance(entry, dict)
        and set(entry) == {"key", "result"}
        and isinstance(entry["key"], str)
        and _KEY.fullmatch(entry["key"]) is not None
        and valid(entry["result"])
    )
