"""Mark a stale project fact reviewed: touch its mtime (the lifecycle clock) through the guard."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from . import audit
from .guard import GuardError, check_fd, open_dir, resolve

_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
)


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
