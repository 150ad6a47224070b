"""A Claude Code session's subagents: read with the session, labelled as its sidechains.

Current Claude Code keeps what a subagent (the Task tool) said and did in
`<project>/<session>/subagents/agent-*.jsonl`, beside the session's own `<session>.jsonl`, instead of
inline as `isSidechain` records. Reflection reads those files with their session, within the session's
own bounds (transcript.MAX_READ bytes in all: what the session left of it, each file from its end,
newest file first), marks each record as a sidechain so it is labelled "subagent …" like the inline
ones, and places it among the session's records by its timestamp. Only regular files are read (a link,
a FIFO or a device is refused by the bounded reader); a `subagents` folder that is a link is not read.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ..store.reader import Refused, read_file_tail


def folder_of(session: Path) -> Path | None:
    """The session's subagents folder, when it is a real folder."""
    if session.suffix != ".jsonl":
        return None
    holder = session.parent / session.stem
    folder = holder / "subagents"
    try:
        if not stat.S_ISDIR(os.lstat(holder).st_mode) or not stat.S_ISDIR(os.lstat(folder).st_mode):
            return None
    except OSError:
        return None
    return folder


def _files(folder: Path) -> list[tuple[float, Path]]:
    out = []
    for entry in folder.glob("*.jsonl"):
        try:
            st = os.lstat(entry)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.append((st.st_mtime, entry))
    return sorted(out, reverse=True)


def _stamp(obj: object) -> str | None:
    value = obj.get("timestamp") if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None


def read(folder: Path, budget: int) -> tuple[list[tuple[str, str]], int, int]:
    """((timestamp, record line) of every subagent record read, marked as a sidechain; bytes not read;
    the files' total size), reading at most `budget` bytes."""
    records: list[tuple[str, str]] = []
    not_read = total = 0
    for _mtime, path in _files(folder):
        try:
            got = read_file_tail(path, max(budget, 0))
        except (OSError, Refused):
            continue
        total += got.size
        data = got.data
        if got.truncated:
            newline = data.find(b"\n")
            data = data[newline + 1 :] if newline >= 0 else b""
        not_read += got.size - len(data)
        budget -= len(got.data)
        for line in data.decode("utf-8", errors="replace").splitlines():
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and (when := _stamp(obj)) is not None:
                obj["isSidechain"] = True
                records.append((when, json.dumps(obj, ensure_ascii=False)))
    return sorted(records, key=lambda r: r[0]), not_read, total


def merged(session_text: str, records: list[tuple[str, str]]) -> str:
    """The session's lines with the subagent records placed by timestamp (each before the first session
    record that is later; a session record without a timestamp keeps its place)."""
    if not records:
        return session_text
    out: list[str] = []
    pending = iter(records)
    nxt = next(pending, None)
    for line in session_text.splitlines():
        try:
            when = _stamp(json.loads(line))
        except (ValueError, RecursionError):
            when = None
        while nxt is not None and when is not None and nxt[0] <= when:
            out.append(nxt[1])
            nxt = next(pending, None)
        out.append(line)
    while nxt is not None:
        out.append(nxt[1])
        nxt = next(pending, None)
    return "\n".join(out)
