"""Restoring a version: its exact bytes written back through the tool's guard and atomic writes, under
the store lock, audited, and itself kept as a new version (so a restore can be undone the same way).
A deleted memory is brought back (its folders made again); nothing outside the store is touched."""

from __future__ import annotations

import os
from pathlib import Path

from ..store.atomic import create_at, make_dirs, write_at
from ..tool import audit
from ..tool.commands.writing import store_lock
from ..tool.guard import GuardError, open_dir, resolve
from .query import HistoryError, content_of, kept_mtime
from .versions import kept, sha256


def restore(root: Path | str, vpath: str, version: int) -> int:
    """Write version `version` of `vpath` back; the number of bytes written. The memory keeps the age it
    had with that content (an expired episode brought back is still expired)."""
    data = content_of(root, vpath, version)
    return write_back(root, vpath, data, kept_mtime(root, vpath, sha256(data)))


def write_back(root: Path | str, vpath: str, data: bytes, mtime: float | None = None) -> int:
    """Make `vpath` hold exactly `data` (created when it is missing), with the file time `mtime` when
    given (the time it had with this content: its age comes back with it); the number of bytes written."""
    root_real = Path(os.path.realpath(os.fspath(root)))
    outcome = "error"
    try:
        t = resolve(root_real, vpath)
        if t.is_root:
            raise HistoryError(f"{vpath} is not a memory.")
        with store_lock(root_real), kept(root_real, [vpath], "restore"):
            make_dirs(root_real)
            fd = open_dir(root_real, t.content.dir_parts, create=True)
            try:
                if os.path.lexists(t.lexical):
                    write_at(fd, t.content.name, data)
                else:
                    create_at(fd, t.content.name, data)
                if mtime is not None:  # the file just written, in the folder held open: never a link's target
                    os.utime(t.content.name, (mtime, mtime), dir_fd=fd, follow_symlinks=False)
            finally:
                os.close(fd)
        outcome = "ok"
    except GuardError as exc:
        raise HistoryError(exc.message) from None
    except IsADirectoryError:
        raise HistoryError(f"{vpath} is a folder now: nothing was restored.") from None
    except FileExistsError:
        raise HistoryError(f"{vpath} was created meanwhile: nothing was overwritten.") from None
    except OSError as exc:
        raise HistoryError(
            f"{vpath} could not be restored: {(exc.strerror or 'the write failed').lower()}."
        ) from None
    finally:
        audit.record(root_real, "restore", [vpath], outcome)
    return len(data)
