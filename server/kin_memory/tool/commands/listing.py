"""`view` of a folder: the entries up to two levels deep with their sizes, hidden names and memories of
other workspaces left out.

A listing walks the real tree, so a symlink may point anywhere: an entry is shown only when its realpath
stays inside the root and outside hidden folders, and sizes count regular files only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

from kin_memory.sinks import prompt
from kin_memory.store.paths import virtual_of_rel
from kin_memory.store.scan import is_utf8

from .. import messages
from ..guard import Target
from ..known_stamps import keeper
from ..tree import subtree_sizes, tree_size

MAX_DEPTH = 2


def format_size(n: int) -> str:
    """Like `du -h`: whole units without a decimal, others with one (1.5K)."""
    value = float(n)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            if unit == "B":
                return f"{n}B"
            if value == int(value):
                return f"{int(value)}{unit}"
            return f"{value:.1f}{unit}"
        value /= 1024
    raise AssertionError("unreachable")


Keep = Callable[[str, os.stat_result], bool] | None  # whether a memory is shown; None: every one


def _entry_size(path: str, keep: Keep, sizes: dict[str, list[int]]) -> tuple[int, bool] | None:
    """(size, is_dir) for a listing entry, None when it must not be shown (escaping link, special, a
    memory of another workspace, a folder holding only such memories). Sizes count what is shown."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        known = sizes.get(path)  # a folder reached through a link is not in the one walk: walked itself
        if known is None:
            size, only_hidden = tree_size(path, keep)
            return None if only_hidden else (size, True)
        return None if known[1] and not known[2] else (known[0], True)
    if stat.S_ISREG(st.st_mode):
        return (st.st_size, False) if keep is None or keep(path, st) else None
    return None


def _inside(path: str, root_real: str) -> bool:
    real = os.path.realpath(path)
    if real != root_real and not real.startswith(root_real.rstrip(os.sep) + os.sep):
        return False
    rel = os.path.relpath(real, root_real)
    return rel == "." or not any(c.startswith(".") for c in rel.split(os.sep))


def _children(path: str) -> list[tuple[str, bool]]:
    """The names a listing shows (not hidden, and valid UTF-8: the store leaves the others out), each
    with whether it is a symbolic link."""
    try:
        with os.scandir(path) as it:
            found = [(e.name, e.is_symlink()) for e in it if not e.name.startswith(".") and is_utf8(e.name)]
    except OSError:
        return []
    return sorted(found)


def _walk(dirpath: str, vbase: str, depth: int, root_real: str, lines: list[str], keep: Keep,
          sizes: dict[str, list[int]], real: bool = True) -> None:  # fmt: skip
    """Append one line per visible entry below dirpath, descending into folders up to MAX_DEPTH.
    `real`: dirpath is its own realpath (no link on the way), so a child that is no link is inside."""
    for name, is_link in _children(dirpath):
        child = os.path.join(dirpath, name)
        if (is_link or not real) and not _inside(child, root_real):
            continue
        entry = _entry_size(child, keep, sizes)
        if entry is None:
            continue
        size, is_dir = entry
        vchild = f"{vbase}/{name}"
        # A name may hold a newline or a control character: the prompt sink shows it escaped, so one
        # entry is one line and a planted name cannot fake entries in what the model reads.
        lines.append(f"{format_size(size)}\t{prompt.field(vchild)}{'/' if is_dir else ''}")
        if is_dir and depth < MAX_DEPTH:
            _walk(child, vchild, depth + 1, root_real, lines, keep, sizes, real and not is_link)


def listing(t: Target, active: tuple[str, ...] = ()) -> str | None:
    """The folder's entries as the active workspace sees them (everything in the operator's view); None
    for a folder below the root that holds memories but none this workspace sees (it answers as a missing
    path does, like each of them)."""
    base = virtual_of_rel("/".join(t.parts))
    top = os.fspath(t.resolved)
    lines = [messages.dir_header(base)]
    root_real = os.fspath(t.root_real)
    keep = keeper(root_real, base, active) if active else None  # stamps known already, not re-read
    sizes = subtree_sizes(top, keep) if os.path.isdir(top) else {}
    info = _entry_size(top, keep, sizes) if os.path.exists(top) else (0, True)  # a missing root: empty
    if info is None and not t.is_root:
        return None
    lines.append(f"{format_size(info[0] if info else 0)}\t{base}")
    if os.path.isdir(top):
        _walk(top, base, 1, root_real, lines, keep, sizes)
    return "\n".join(lines)
