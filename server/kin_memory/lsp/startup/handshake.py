"""The server's answer to `initialize`, remembered per client so the next start can answer it at once.

The answer (the server's capabilities) depends only on this code and on the client's capabilities, not on
the store, so it is kept in the user's cache folder ($XDG_CACHE_HOME/kin-memory, else ~/.cache/kin-memory)
under a digest of both. A start whose client sends the same capabilities answers from it before the LSP
stack is imported (see front.py); any other start lets pygls answer and remembers what it said. A file
from another build never matches (the digest covers the code); the file is never read through a link nor
past 64 KB, and one not exactly of the shape remember() writes, or an answer this server would not give
(capabilities.is_server_answer) or in an encoding the client does not take, is ignored: the answer is
then made as on a first start. Deleting it only costs the next start a few tenths of a second.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import stat
from pathlib import Path

from .capabilities import is_server_answer, offers

log = logging.getLogger("kin_memory.lsp")

FILE_NAME = "handshake.json"
KEPT = 4  # clients remembered (VS Code, Neovim, ...), most recent first
MAX_BYTES = 64 * 1024  # an answer is about 2 KB
_KEY = re.compile(r"[0-9a-f]{32}")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def handshake_key(params: object) -> str | None:
    """The digest of this code and the client's capabilities; None for params that are not an object."""
    from ...caches.findings import code_version

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


def _read() -> list[dict]:
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
    if not isinstance(entries, list) or len(entries) > KEPT or not all(_is_entry(e) for e in entries):
        return []
    return entries


def _is_entry(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and set(entry) == {"key", "result"}
        and isinstance(entry["key"], str)
        and _KEY.fullmatch(entry["key"]) is not None
        and is_server_answer(entry["result"])
    )


def remembered(key: str, params: object = None) -> dict | None:
    """The answer remembered for this key: an `InitializeResult` this server gives (see
    capabilities.is_server_answer) in an encoding the client takes (given its params), or None."""
    for entry in _read():
        if entry["key"] == key:
            result = entry["result"]
            encoding = result["capabilities"]["positionEncoding"]
            return result if params is None or offers(params, encoding) else None
    return None


def remember(key: str, result: object) -> None:
    """Keep pygls's answer for this key (the most recent KEPT clients); failures only cost speed."""
    if _KEY.fullmatch(key) is None or not is_server_answer(result):
        return  # not what the next start would take
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
    finally:
        os.close(fd)
