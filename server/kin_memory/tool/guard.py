"""The containment guard: untrusted virtual path → safe location under the root, or GuardError.

Two layers. `resolve` refuses every hostile spelling up front (prefix, `/memories-x`, traversal, encoded
traversal, backslashes, NUL, dot-leading components) and checks the realpath of the target (and of its
parent) stays inside the root and outside the hidden index folder. Then every operation reaches the
file through `open_dir`: each directory component is opened with O_NOFOLLOW relative to its parent, so a
symlink planted between the check and the use is refused, never followed, and the final name is used
with `dir_fd`. Messages name virtual paths only.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from kin_memory.store.memory import MAX_READ_BYTES
from kin_memory.store.reader import read_fd
from kin_memory.store.root import VIRTUAL_ROOT
from kin_memory.store.scan import is_utf8, shown_name

from . import messages

_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_FORBIDDEN_DECODED = {0x2E, 0x2F, 0x5C, 0x00}  # . / \ NUL
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
DIR_MODE = 0o700
# The most the tool reads of a file it edits (str_replace, insert): a file the store itself would not
# parse (store.memory.MAX_READ_BYTES) is refused with its size rather than read whole into memory.
EDIT_LIMIT = MAX_READ_BYTES


class GuardError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Place:
    """A directory below the root (as components of its realpath) and one name in it."""

    dir_parts: tuple[str, ...]
    name: str


@dataclass(frozen=True)
class Target:
    virtual: str  # the path as the caller gave it (used in messages)
    parts: tuple[str, ...]  # components below the root
    lexical: Path  # root/<parts>, symlinks not followed (delete/rename operate on this)
    resolved: Path  # realpath, checked to stay under realpath(root) (reads/writes go here)
    root_real: Path
    content: Place  # where reads and writes of the content go (an in-store symlink is followed)
    entry: Place  # the directory entry itself (delete/rename act on a link, not on what it points at)

    @property
    def is_root(self) -> bool:
        return not self.parts


def _under(path: str, root_real: str) -> bool:
    return path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep)


def _rel_parts(real: str, root_real: str) -> tuple[str, ...]:
    rel = os.path.relpath(real, root_real)
    return () if rel == "." else tuple(rel.split(os.sep))


def _place(real: str, root_real: str) -> Place:
    parts = _rel_parts(real, root_real)
    return Place(parts[:-1], parts[-1]) if parts else Place((), "")


def _contained(real: str, root_real: str) -> bool:
    if not _under(real, root_real):
        return False
    return not any(c.startswith(".") for c in _rel_parts(real, root_real))


def resolve(root: Path | str, vpath: object) -> Target:
    if not isinstance(vpath, str):
        raise GuardError(messages.missing_prefix(str(vpath)))
    if not vpath.startswith(VIRTUAL_ROOT):
        raise GuardError(messages.missing_prefix(vpath))
    rest = vpath[len(VIRTUAL_ROOT) :]
    if rest and not rest.startswith("/"):
        raise GuardError(messages.missing_prefix(vpath))  # /memories-x: a sibling, not the root
    if "\x00" in vpath or "\\" in vpath:
        raise GuardError(messages.traversal(vpath))
    if not is_utf8(vpath):  # a name no store part can hold (see store/scan.py): never made, never reached
        raise GuardError(messages.not_found(shown_name(vpath)))
    for m in _PERCENT.finditer(vpath):
        if int(m.group(1), 16) in _FORBIDDEN_DECODED:
            raise GuardError(messages.traversal(vpath))
    parts = tuple(p for p in rest.split("/") if p)
    for p in parts:
        if p.startswith("."):  # "." / ".." traversal and hidden names (the index folder)
            raise GuardError(messages.traversal(vpath))
    root_real = os.path.realpath(os.fspath(root))
    lexical = Path(root_real).joinpath(*parts) if parts else Path(root_real)
    resolved = os.path.realpath(lexical)
    # the target and (for delete/rename of a link) its parent must both stay inside, out of hidden folders
    parent_real = os.path.realpath(lexical.parent) if parts else root_real
    if not _contained(resolved, root_real) or not _contained(parent_real, root_real):
        raise GuardError(messages.SYMLINK_ESCAPE)
    # fixed now, at check time: what the path means later is exactly what open_dir refuses to change
    content = _place(resolved, root_real)
    entry = Place(_rel_parts(parent_real, root_real), parts[-1]) if parts else Place((), "")
    return Target(vpath, parts, lexical, Path(resolved), Path(root_real), content, entry)


def fd_real_path(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def check_fd(fd: int, root_real: Path | str) -> None:
    """The opened object's real path must still be inside the root (belt and braces over O_NOFOLLOW)."""
    real = fd_real_path(fd)
    if real is not None and real.startswith("/") and not _contained(real, os.fspath(root_real)):
        raise GuardError(messages.SYMLINK_ESCAPE)


def _open_child_dir(fd: int, name: str, *, create: bool) -> int:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
        try:
            os.mkdir(name, DIR_MODE, dir_fd=fd)
        except FileExistsError:
            pass
        child = os.open(name, DIR_FLAGS, dir_fd=fd)
        os.fchmod(child, DIR_MODE)  # whatever the umask
        os.fsync(fd)
        return child
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                is_link = stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
            except OSError:
                is_link = False
            if is_link:  # a symlink where the check saw a real directory: planted in between
                raise GuardError(messages.SYMLINK_ESCAPE) from None
        raise


def open_dir(root_real: Path | str, dir_parts: tuple[str, ...], *, create: bool = False) -> int:
    """An fd on root/<dir_parts>, walked one O_NOFOLLOW component at a time (missing ones made 0700)."""
    if any(not name or name.startswith(".") or "/" in name for name in dir_parts):
        raise GuardError(messages.SYMLINK_ESCAPE)  # never walk up, never into the hidden folder
    fd = os.open(os.fspath(root_real), os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in dir_parts:
            child = _open_child_dir(fd, name, create=create)
            os.close(fd)
            fd = child
        check_fd(fd, root_real)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_file_at(dir_fd: int, name: str, root_real: Path | str) -> int:
    """An fd on one regular file in dir_fd, opened without following a link and without blocking (a
    FIFO opens at once and is refused); IsADirectoryError for anything but a regular file."""
    fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file")
        check_fd(fd, root_real)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_at(dir_fd: int, name: str, root_real: Path | str) -> tuple[bytes, os.stat_result]:
    """Read one regular file in dir_fd without following a link; IsADirectoryError for anything else,
    reader.Refused (naming the size) for a file over EDIT_LIMIT."""
    fd = open_file_at(dir_fd, name, root_real)
    try:
        got = read_fd(fd, EDIT_LIMIT)
    finally:
        os.close(fd)
    return got.data, got.st


def open_target(target: Target) -> int:
    """An fd on the resolved file (see open_file_at), reached without following a link swapped in."""
    place = target.content
    dir_fd = open_dir(target.root_real, place.dir_parts)
    try:
        return open_file_at(dir_fd, place.name, target.root_real)
    finally:
        os.close(dir_fd)


def open_for_read(
    target: Target, *, limit: int = EDIT_LIMIT, truncate: bool = False
) -> tuple[bytes, os.stat_result]:
    """Read the resolved file without following a link swapped in after the check: at most `limit`
    bytes (reader.Refused beyond, or only the first `limit` with truncate)."""
    fd = open_target(target)
    try:
        got = read_fd(fd, limit, truncate=truncate)
    finally:
        os.close(fd)
    return got.data, got.st
