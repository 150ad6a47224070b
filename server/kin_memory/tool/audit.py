"""Audit log: one JSON line per mutation and per file-body view, in the root's hidden folder.

The log is opened through store.paths' hidden-folder helpers: a hidden folder (or an `audit.jsonl`) that
is a link, a FIFO or anything but what it should be is refused, so no line is ever written outside the
store. The refusal is logged once per store; the operation itself goes on (the audit never breaks it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from datetime import datetime, timezone
from pathlib import Path

from kin_memory.store.paths import HIDDEN_DIR, HiddenRefused, open_hidden_dir, open_hidden_file

AUDIT_NAME = "audit.jsonl"

log = logging.getLogger("kin_memory.tool")
_refusals_logged: set[str] = set()


def audit_path(root: Path | str) -> Path:
    return Path(os.path.realpath(os.fspath(root))) / HIDDEN_DIR / AUDIT_NAME


def _line(command: str, paths: list[str], outcome: str, source: str | None) -> bytes:
    record = {
        "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "command": command,
        "paths": list(paths),
        "outcome": outcome,
    }
    if source is not None:  # who made the call: the editor's tool, an agent (MCP, the SDK backend)...
        record["source"] = source
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")


def _append(root_real: str, data: bytes) -> None:
    dir_fd = open_hidden_dir(root_real, create=True)
    try:
        fd = open_hidden_file(dir_fd, AUDIT_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


def record(root: Path | str, command: str, paths: list[str], outcome: str, source: str | None = None) -> None:
    """Append one line; every failure is swallowed (the audit never breaks the operation)."""
    with contextlib.suppress(Exception):
        root_real = os.path.realpath(os.fspath(root))
        if not os.path.isdir(root_real):
            return
        try:
            _append(root_real, _line(command, paths, outcome, source))
        except HiddenRefused as exc:
            if root_real not in _refusals_logged:
                _refusals_logged.add(root_real)
                log.warning("audit log not written: %s", exc.reason)
