"""The stamps a folder view filters by, from what is already known instead of every file read again.

`view /memories` is usually an agent's first call, and the workspace filter used to read the head of
every memory below the folder (a second or two at 10,000 memories) where the operator's unfiltered
listing only stats them. The recall index already holds each memory's stamp with the freshness key of
the reading it came from (store/freshness.py, the one rule every cache uses): a file whose key is the
one the index saw has the stamp the index holds, and only the others (new, changed, not indexed, or no
usable index at all) are read. The index's rows are read once per folder view, by a range over its
vpath index, and kept in this process while the index's files are unchanged (an MCP server, an SDK
process or an editor asks many views in a row).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ..store import index_hooks
from ..store.freshness import key_of, unchanged
from ..store.paths import virtual_of_rel
from ..store.workspace import visibility
from .visibility import visible

INVALID = ("invalid",)  # a stamp no workspace matches (not a string, hostile): the index's scope None
Rows = index_hooks.StampRows
_lock = threading.Lock()
_kept: dict[tuple[str, str], tuple[object, Rows]] = {}
_KEPT_MAX = 8  # folders whose rows a process keeps


def _rows(root_real: str, vprefix: str) -> Rows:
    signature = index_hooks.signature(root_real)
    if signature is None:
        return {}
    with _lock:
        held = _kept.get((root_real, vprefix))
        if held is not None and held[0] == signature:
            return held[1]
    rows = index_hooks.stamps_below(root_real, vprefix) or {}
    with _lock:
        if len(_kept) >= _KEPT_MAX:
            _kept.clear()
        _kept[(root_real, vprefix)] = (signature, rows)
    return rows


def _stamp(row: tuple[int, str | None, str | None]) -> object:
    """The stamp as visibility reads it: absent or `global` (scope global), the path or label, or one
    that matches no workspace (scope None)."""
    _key, workspace, scope = row
    return INVALID if scope is None else workspace


def keeper(root_real: str, vprefix: str, active: tuple[str, ...]) -> Callable[[str, os.stat_result], bool]:
    """`keep(path, st)`: whether the memory at `path` (below the root, stat'ed as `st`) is visible from
    `active`; the stamp from the index when the file is the one it saw, else read from the file. Asked
    once per path (a listing counts a folder's files again for each level it shows)."""
    rows = _rows(root_real, vprefix)
    memo: dict[str, bool] = {}
    by_stamp: dict[object, bool] = {}  # thousands of memories share a handful of stamps
    prefix = root_real.rstrip(os.sep) + os.sep

    def keep(path: str, st: os.stat_result) -> bool:
        known = memo.get(path)
        if known is not None:
            return known
        row = rows.get(virtual_of_rel(path[len(prefix) :])) if path.startswith(prefix) else None
        if row is not None and unchanged(row[0], key_of(st)):
            stamp = _stamp(row)
            result = by_stamp.get(stamp)
            if result is None:
                result = by_stamp[stamp] = visibility(stamp, active).visible
        else:
            result = visible(path, active)
        memo[path] = result
        return result

    return keep
