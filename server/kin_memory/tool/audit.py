"""Audit log: one JSON line per mutation and per file-body view, in the root's hidden folder."""

from __future__ import annotations

import contextlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from kin_memory.store.paths import HIDDEN_DIR

AUDIT_NAME = "audit.jsonl"


def audit_path(root: Path | str) -> Path:
    return Path(os.path.realpath(os.fspath(root))) / HIDDEN_DIR / AUDIT_NAME


def record(root: Path | str, command: str, paths: list[str], outcome: str) -> None:
    """Append one line; every failure is swallowed (the audit never breaks the operation)."""
    with contextlib.suppress(Exception):
        target = audit_path(root)
        if not target.parent.parent.is_dir():
            return
        if not os.path.lexists(target.parent):
            with contextlib.suppress(FileExistsError):
                os.mkdir(target.parent, 0o700)
                os.chmod(target.parent, 0o700)
        line = (
            json.dumps(
                {
                    "time": datetime.now(timezone.utc)
                    .isoformat(timespec="milliseconds")
                    .replace("+00:00", "Z"),
                    "command": command,
                    "paths": list(paths),
                    "outcome": outcome,
                },
                ensure_ascii=False,
            )
            + "\n"
        )
        flags = (
            os.O_WRONLY
            | os.O_APPEND
            | os.O_CREAT
            | getattr(os, "O_NOFOLLOW", 0)
            | getattr(os, "O_CLOEXEC", 0)
        )
        fd = os.open(target, flags, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "surrogatepass"))
        finally:
            os.close(fd)
