"""Reading a file for an edit and committing the edit: one writer per store, the file re-checked under
the lock, the open editor buffer kept in step, then the atomic replace.

The two `before_*` functions are seams that do nothing: tests replace them to stage a race (a file
changed, deleted or swapped for a symlink) at the exact moment between the check and the use.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from kin_memory.store.paths import open_hidden_dir, open_hidden_file
from kin_memory.store.reader import Refused, describe_size

from ...store.atomic import Changed, write_at
from .. import messages
from ..guard import EDIT_LIMIT, GuardError, Target, open_dir, open_for_read, read_at
from .base import ToolContext, ToolFailure, check_cancelled

LOCK_NAME = "tool.lock"

_thread_lock = threading.Lock()


def before_commit(path: Path) -> None:
    """Runs between reading a file and committing its edit."""


def before_write(path: Path) -> None:
    """Runs between the guard's check and a create, delete or rename."""


def within_limit(t: Target, text: str) -> bytes:
    """The bytes of a write, at most EDIT_LIMIT of them: the most the tool reads back for an edit and
    the most history keeps a version of. A larger write is refused before anything is written, so the
    review queue never misses a write the tool made."""
    data = text.encode("utf-8")
    if len(data) > EDIT_LIMIT:
        size, limit = describe_size(len(data)), describe_size(EDIT_LIMIT)
        raise ToolFailure(messages.too_large_to_write(t.virtual, size, limit))
    return data


def _read_failure(exc: OSError, t: Target, missing: str) -> ToolFailure:
    if isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOTDIR:
        return ToolFailure(missing)
    if exc.errno == errno.ELOOP:  # the final component became a symlink after the check
        return ToolFailure(messages.SYMLINK_ESCAPE)
    return ToolFailure(messages.os_error(t.virtual, "read"))


@contextlib.contextmanager
def read_failures(t: Target, *, missing: str) -> Iterator[None]:
    """Every way a read of the target can fail, as the failure shown to the model."""
    try:
        yield
    except GuardError as exc:
        raise ToolFailure(exc.message) from None
    except Refused as exc:  # only "too-large" gets here: open_file_at refuses anything not regular
        size = describe_size(exc.size or 0)
        raise ToolFailure(messages.too_large_to_edit(t.virtual, size, describe_size(EDIT_LIMIT))) from None
    except IsADirectoryError:
        raise ToolFailure(messages.not_a_file(t.virtual)) from None
    except OSError as exc:
        raise _read_failure(exc, t, missing) from None


def read_text(t: Target, *, missing: str) -> tuple[str, os.stat_result]:
    """The file's text and the stat it was read with (the commit compares against it); a file over
    EDIT_LIMIT is refused with its size, never read whole."""
    with read_failures(t, missing=missing):
        data, st = open_for_read(t)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(messages.not_utf8(t.virtual)) from None
    return text, st


def _open_lock_file(root_real: Path) -> int:
    """The lock file in the hidden folder, never through a link (see store.paths.open_hidden_dir)."""
    dir_fd = open_hidden_dir(root_real, create=True)
    try:
        return open_hidden_file(dir_fd, LOCK_NAME, os.O_RDWR | os.O_CREAT)
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def store_lock(root_real: Path) -> Iterator[None]:
    """One writer at a time per store: a thread lock plus an flock in the hidden folder (best effort:
    a store where the lock file cannot be made still gets the thread lock)."""
    with _thread_lock:
        fd = None
        with contextlib.suppress(Exception):  # a refused hidden folder (a link) included: no flock then
            fd = _open_lock_file(root_real)
            import fcntl  # POSIX only: elsewhere the ImportError is suppressed with the rest

            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)  # closing releases the flock


def _open_content_dir(t: Target) -> int:
    try:
        return open_dir(t.root_real, t.content.dir_parts)
    except GuardError as exc:
        raise ToolFailure(exc.message) from None
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise ToolFailure(messages.vanished(t.virtual)) from None
        raise ToolFailure(messages.os_error(t.virtual, "write")) from None


def _reread(dir_fd: int, t: Target) -> tuple[bytes, os.stat_result]:
    try:
        return read_at(dir_fd, t.content.name, t.root_real)
    except FileNotFoundError:
        raise ToolFailure(messages.vanished(t.virtual)) from None
    except GuardError as exc:
        raise ToolFailure(exc.message) from None
    except (OSError, Refused):  # replaced by a link, a folder or a much larger file meanwhile
        raise ToolFailure(messages.conflict(t.virtual)) from None


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_ino, st.st_size, st.st_mtime_ns


def _replace(dir_fd: int, t: Target, new_text: str, now: os.stat_result) -> None:
    try:
        write_at(dir_fd, t.content.name, new_text.encode("utf-8"), expect=now)
    except Changed:
        raise ToolFailure(messages.conflict(t.virtual)) from None
    except OSError:
        raise ToolFailure(messages.os_error(t.virtual, "write")) from None


def commit_edit(
    t: Target, before: os.stat_result, old_text: str, new_text: str, ctx: ToolContext, *, locked: bool = False
) -> None:
    """Write new_text unless the file changed since it was read as old_text; through the editor when
    the file is open there. `locked`: the caller read the file under the store lock and still holds
    it (the window in which another writer can slip in is then the write itself, not the wait)."""
    within_limit(t, new_text)
    before_commit(t.resolved)
    with contextlib.nullcontext() if locked else store_lock(t.root_real):
        dir_fd = _open_content_dir(t)
        try:
            data, now = _reread(dir_fd, t)
            if _identity(now) != _identity(before) or data != old_text.encode("utf-8"):
                raise ToolFailure(messages.conflict(t.virtual))
            check_cancelled(ctx, "edit", t.virtual)
            through_editor(t, ctx, old_text, new_text)
            _replace(dir_fd, t, new_text, now)
        finally:
            os.close(dir_fd)


def through_editor(t: Target, ctx: ToolContext, old_text: str, new_text: str) -> None:
    """An open document gets the edit as an editor edit (undo works) before the disk write."""
    if ctx.editor is None:
        return
    try:
        open_doc = ctx.editor.buffer(t.resolved)
    except Exception:  # an editor that cannot answer is treated as not having the file open
        open_doc = None
    if open_doc is None:
        return
    text, version = open_doc
    if text != old_text:  # unsaved changes in the buffer: never clobber them
        raise ToolFailure(messages.unsaved(t.virtual))
    try:
        applied = ctx.editor.apply(t.resolved, version, old_text, new_text)
    except Exception:
        applied = False
    if not applied:
        raise ToolFailure(messages.editor_refused(t.virtual))


def open_place_dir(t: Target, dir_parts: tuple[str, ...], what: str, *, create: bool = False) -> int:
    """An fd on a folder below the root for a create, delete or rename (`what` names it in errors)."""
    try:
        return open_dir(t.root_real, dir_parts, create=create)
    except GuardError as exc:
        raise ToolFailure(exc.message) from None
    except OSError:
        raise ToolFailure(messages.os_error(t.virtual, what)) from None
