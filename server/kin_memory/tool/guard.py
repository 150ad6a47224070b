"""Untrusted virtual path → safe real path under the root, or GuardError with the reference text."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from kin_memory.store.root import VIRTUAL_ROOT

from . import messages

_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_FORBIDDEN_DECODED = {0x2E, 0x2F, 0x5C, 0x00}  # . / \ NUL


class GuardError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Target:
    virtual: str  # the path as the caller gave it (used in messages)
    parts: tuple[str, ...]  # components below the root
    lexical: Path  # root/<parts>, symlinks not followed (delete/rename operate on this)
    resolved: Path  # realpath, checked to stay under realpath(root) (reads/writes go here)
    root_real: Path

    @property
    def is_root(self) -> bool:
        return not self.parts


def _under(path: str, root_real: str) -> bool:
    return path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep)


def resolve(root: Path | str, vpath: object) -> Target:
    if not isinstance(vpath, str):
        raise GuardError(messages.missing_prefix(str(vpath)))
    if not vpath.startswith(VIRTUAL_ROOT):
        raise GuardError(messages.missing_prefix(vpath))
    rest = vpath[len(VIRTUAL_ROOT):]
    if rest and not rest.startswith("/"):
        raise GuardError(messages.missing_prefix(vpath))  # /memories-x: a sibling, not the root
    if "\x00" in vpath or "\\" in vpath:
        raise GuardError(messages.traversal(vpath))
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
    if not _under(resolved, root_real):
        raise GuardError(messages.SYMLINK_ESCAPE)
    rel = os.path.relpath(resolved, root_real)
    if rel != "." and any(c.startswith(".") for c in rel.split(os.sep)):
        raise GuardError(messages.SYMLINK_ESCAPE)  # a link into the hidden index folder
    return Target(vpath, parts, lexical, Path(resolved), Path(root_real))


def fd_real_path(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def open_for_read(target: Target) -> tuple[bytes, os.stat_result]:
    """Read the resolved file without following a link swapped in after the check."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(target.resolved, flags)
    try:
        st = os.fstat(fd)
        real = fd_real_path(fd)
        if real is not None and real.startswith("/"):
            if not _under(real, os.fspath(target.root_real)):
                raise GuardError(messages.SYMLINK_ESCAPE)
        else:
            lst = os.lstat(target.resolved)
            if (lst.st_dev, lst.st_ino) != (st.st_dev, st.st_ino):
                raise GuardError(messages.SYMLINK_ESCAPE)
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(str(target.virtual))
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks), st
    finally:
        os.close(fd)
