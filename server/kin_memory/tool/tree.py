"""Walks over a folder tree without recursion.

A tree can be far deeper than Python's recursion limit (an agent, a script or a sync tool may make one
a thousand folders deep outside the tool), so every walk the tool does keeps its own stack: a size for
a listing, the height of a folder before it is moved, and (in atomic.remove_at) a whole-tree delete.
None of them follows a symbolic link.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable

_DIR_FLAGS = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


def tree_size(path: str, keep: Callable[[str, os.stat_result], bool] | None = None) -> tuple[int, bool]:
    """(total size of the regular files below path that `keep` accepts, whether files exist below it but
    none was accepted), hidden names and links skipped (as `du` would count a listing entry).
    Unreadable parts count as empty."""
    total = 0
    files = kept = 0
    pending = [path]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    pending.append(entry.path)
                elif stat.S_ISREG(st.st_mode):
                    files += 1
                    if keep is None or keep(entry.path, st):
                        kept += 1
                        total += st.st_size
    return total, files > 0 and kept == 0


def subtree_sizes(
    top: str, keep: Callable[[str, os.stat_result], bool] | None = None
) -> dict[str, list[int]]:
    """tree_size of `top` and of every real folder below it, from one walk: folder → [size of the
    files `keep` accepts, files, files accepted]. A listing shows three levels, and asking tree_size of
    each folder it shows walked the deeper levels again for each (three stats per file at 10,000)."""
    own: dict[str, list[int]] = {}
    subs: dict[str, list[str]] = {}
    order, pending = [], [top]
    while pending:
        folder = pending.pop()
        order.append(folder)
        counts, below = [0, 0, 0], []
        try:
            entries = list(os.scandir(folder))
        except OSError:
            entries = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    below.append(entry.path)
                    pending.append(entry.path)
                elif stat.S_ISREG(st.st_mode):
                    counts[1] += 1
                    if keep is None or keep(entry.path, st):
                        counts[2] += 1
                        counts[0] += st.st_size
        own[folder], subs[folder] = counts, below
    for folder in reversed(order):  # children before their parents
        mine = own[folder]
        for sub in subs[folder]:
            theirs = own[sub]
            mine[0] += theirs[0]
            mine[1] += theirs[1]
            mine[2] += theirs[2]
    return own


def _subfolders(fd: int) -> list[str]:
    """The names of the real (not linked, not hidden) folders in the folder open at fd."""
    names = []
    for name in os.listdir(fd):
        if name.startswith("."):
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                names.append(name)
    return names


def deeper_than(path: str, levels: int) -> bool:
    """Whether the folder at path holds folders more than `levels` levels below it (hidden ones and
    links aside). Stops as soon as it knows, so it opens at most levels + 1 folders at a time."""
    try:
        top = os.open(path, _DIR_FLAGS)
    except OSError:  # a file, a link or nothing: it has no folders below it
        return False
    stack = [(top, iter(_subfolders(top)))]
    try:
        while stack:
            fd, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(stack.pop()[0])
                continue
            if len(stack) > levels:  # this child sits len(stack) levels below the top
                return True
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            try:
                stack.append((child, iter(_subfolders(child))))
            except OSError:
                os.close(child)
        return False
    finally:
        for fd, _ in stack:
            os.close(fd)
