"""What this machine's syncs found trustworthy among the synced files, kept in the hidden folder (never
synced): the machines whose own commits wrote their machine file (`vouched`), and the conflict records
that match the store's history (`records`, by path, with a digest of the bytes checked).

A synced file is written by whoever pushed it. A machine file is read first when its machine's own commit
wrote it (so files planted under other names cannot push it out of the bounded read), and a conflict
record is shown only when the sync that brought it found each version in the history of the machine it
names (so a planted record neither puts KM800 on a memory nor supplies a version). Light: the doors that
read the synced folder import it; a store that is not synced never does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from pathlib import Path

from .atomic import write_at
from .paths import HiddenRefused, open_hidden_dir, open_hidden_file

FILE_NAME = "sync-trust.json"
READ_LIMIT = 256 * 1024
MAX_VOUCHED = 256
_ID = re.compile(r"^[0-9a-f]{16}$")
_RECORD = re.compile(r"^\.kin-sync/conflicts/[0-9a-f]{40}\.json$")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read(root: Path) -> tuple[tuple[str, ...], dict[str, str]]:
    """(vouched machine ids, newest first; accepted records: path → digest); empty when none kept."""
    with contextlib.suppress(OSError, HiddenRefused, ValueError, RecursionError, AttributeError):
        dir_fd = open_hidden_dir(root)
        try:
            fd = open_hidden_file(dir_fd, FILE_NAME, os.O_RDONLY)
        finally:
            os.close(dir_fd)
        try:
            raw = json.loads(os.read(fd, READ_LIMIT))
        finally:
            os.close(fd)
        vouched = tuple(i for i in raw.get("vouched", []) if isinstance(i, str) and _ID.match(i))
        records = {k: v for k, v in dict(raw.get("records", {})).items()
                   if isinstance(k, str) and _RECORD.match(k) and isinstance(v, str) and _DIGEST.match(v)}  # fmt: skip
        return vouched[:MAX_VOUCHED], records
    return (), {}


def write(root: Path, vouched: list[str], records: dict[str, str]) -> None:
    """Keep the lists (vouched: newest first, bounded). A store whose hidden folder is refused keeps none."""
    body = {"vouched": list(dict.fromkeys(vouched))[:MAX_VOUCHED], "records": dict(sorted(records.items()))}
    with contextlib.suppress(OSError, HiddenRefused):
        dir_fd = open_hidden_dir(root, create=True)
        try:
            write_at(dir_fd, FILE_NAME, (json.dumps(body, indent=1) + "\n").encode())
        finally:
            os.close(dir_fd)
