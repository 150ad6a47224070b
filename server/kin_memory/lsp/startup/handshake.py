"""The server's answer to `initialize`, remembered per client so the next start can answer it at once.

The answer (the server's capabilities) depends only on this code and on the client's capabilities, not on
the store, so it is kept in the user's cache folder ($XDG_CACHE_HOME/kin-memory, else ~/.cache/kin-memory)
under a digest of both. A start whose client sends the same capabilities answers from it before the LSP
stack is imported (see front.py); any other start lets pygls answer and remembers what it said. The file
is never read through a link, one that is not what it should be is ignored, and deleting it only costs
the next start a few tenths of a second.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("kin_memory.lsp")

FILE_NAME = "handshake.json"
KEPT = 4  # clients remembered (VS Code, Neovim, ...), most recent first
MAX_BYTES = 256 * 1024


def handshake_key(params: object) -> str | None:
    """The digest of this code and the client's capabilities; None for params that are not an object."""
    from ...findings.cache import code_version

    if not isinstance(params, dict):
        return None
    try:
        capabilities = json.dumps(params.get("capabilities"), sort_keys=True)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(f"{code_version()}\n{capabilities}".encode()).hexdigest()[:32]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kin-memory"


def _open_dir(create: bool = False) -> int:
    folder = cache_dir()
    if create:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def _read() -> list[dict]:
    try:
        fd = _open_dir()
    except OSError:
        return []
    try:
        # Never through a link, never blocking on a FIFO planted in its place.
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        file_fd = os.open(FILE_NAME, flags, dir_fd=fd)
        with os.fdopen(file_fd, "rb") as f:
            raw = f.read(MAX_BYTES + 1) if stat.S_ISREG(os.fstat(file_fd).st_mode) else b"null"
        data = json.loads(raw) if len(raw) <= MAX_BYTES else None
    except (OSError, ValueError):
        return []
    finally:
        os.close(fd)
    entries = data.get("entries") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def remembered(key: str) -> dict | None:
    """The answer remembered for this key: an `InitializeResult` object, or None."""
    for entry in _read():
        result = entry.get("result")
        if (
            entry.get("key") == key
            and isinstance(result, dict)
            and isinstance(result.get("capabilities"), dict)
        ):
            return result
    return None


def remember(key: str, result: object) -> None:
    """Keep pygls's answer for this key (the most recent KEPT clients); failures only cost speed."""
    if not isinstance(result, dict):
        return
    entries = [{"key": key, "result": result}]
    entries += [e for e in _read() if e.get("key") != key][: KEPT - 1]
    data = json.dumps({"entries": entries}).encode()
    if len(data) > MAX_BYTES:
        return
    try:
        fd = _open_dir(create=True)
    except OSError:
        return
    temp = f".{FILE_NAME}.{os.getpid()}.tmp"
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
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
    finally:
        os.close(fd)
