"""Mark a stale project fact reviewed: touch its mtime (the lifecycle clock) through the guard.

Only project facts (the category read from the file itself, with the read-time fallback) can be marked
reviewed: touching an episodic or session memory would silently bring an expired one back to life and
postpone its sweep, and a preference has no review to mark. Those are refused and left untouched.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kin_memory.store.categories import PROJECT_FACT
from kin_memory.store.memory import MAX_READ_BYTES, decode, from_text

from ..store.write_hook import around_write
from . import audit
from .guard import GuardError, check_fd, open_dir, resolve

_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
)


_REFUSALS = {
    "episodic": "Only project facts can be marked reviewed: {vpath} is an episodic memory. It keeps its age, "
    "so the sweep deletes it once it expires.",
    "session": "Only project facts can be marked reviewed: {vpath} is a session memory. It keeps its age, "
    "so the sweep deletes it once it expires.",
    "preference": "Only project facts can be marked reviewed: {vpath} is a preference, which never goes stale.",
}


class ReviewError(Exception):
    """Why the file could not be marked reviewed (names the virtual path only)."""


def mark_reviewed(root: Path | str, vpath: str, now: float | None = None) -> None:
    """Set the file's mtime to now (or `now`); the content is not touched."""
    outcome = "error"
    try:
        t = resolve(root, vpath)
        if t.is_root:
            raise ReviewError(f"The path {vpath} is not a file.")
        place = t.content
        dir_fd = open_dir(t.root_real, place.dir_parts)
        try:
            fd = os.open(place.name, _FLAGS, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ReviewError(f"The path {vpath} is not a file.")
            check_fd(fd, t.root_real)
            category = _category(fd, vpath)
            if category != PROJECT_FACT:
                raise ReviewError(_REFUSALS[category].format(vpath=vpath))
            with around_write(root, [vpath], "edit"):  # the content stays; its version is kept all the same
                os.utime(fd, None if now is None else (now, now))
        finally:
            os.close(fd)
        outcome = "ok"
    except GuardError as exc:
        raise ReviewError(exc.message) from None
    except FileNotFoundError:
        raise ReviewError(f"The path {vpath} does not exist") from None
    except OSError:
        raise ReviewError(
            f"Could not mark {vpath} reviewed: the operation failed on the memory store"
        ) from None
    finally:
        audit.record(root, "markReviewed", [vpath], outcome)


def _category(fd: int, vpath: str) -> str:
    """The file's effective category, read from the open descriptor (a file too large to read as a
    memory reads as a project fact, like everywhere else)."""
    chunks = []
    remaining = MAX_READ_BYTES + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > MAX_READ_BYTES:
        return PROJECT_FACT
    text, _bad, _nul = decode(data)
    return from_text(Path(vpath), vpath, text, 0.0, len(data)).category
