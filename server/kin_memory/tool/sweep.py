"""Sweep: list, then delete, expired episodic and session memories. Never project-fact or preference.

Expiry is the lifecycle of `store.lifecycle` (age = now − mtime; episodic after `episodic_days`, session
after `session_hours`). A plan lists each file with the (mtime, size) it had when listed, and `plan_token`
names exactly that list and the thresholds, so a caller can ask for the deletion of the very list the
user confirmed. Each file is re-read from disk right before it is deleted and kept when it is no longer
expired or no longer the file that was listed (touched, rewritten or re-categorized since the listing:
reported in `changed`). Deletes go through the memory tool's `delete` (the guard, the audit log), never
around it. A real sweep also removes hour-old temp files that
a writer killed mid-write left behind (hidden, never read as memories).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kin_memory.store.categories import EPISODIC, SESSION
from kin_memory.store.freshness import UNSURE, key_at
from kin_memory.store.lifecycle import Thresholds, lifecycle
from kin_memory.store.memory import Memory, load
from kin_memory.store.store import scan

from ..store.atomic import TEMP_PREFIX

SWEPT_CATEGORIES = (EPISODIC, SESSION)
STALE_TEMP_SECONDS = 3600  # a temp file this old belongs to a writer that died mid-write


@dataclass(frozen=True)
class Expired:
    vpath: str
    category: str
    age_days: float
    mtime: float | None = None  # as listed
    size: int | None = None
    key: int | None = None  # the file's freshness key as listed; None: not checked before the delete


@dataclass(frozen=True)
class SweepPlan:
    expired: tuple[Expired, ...]
    total: int  # memory files considered (MEMORY.md excluded)

    @property
    def kept(self) -> int:
        return self.total - len(self.expired)


@dataclass
class SweepResult:
    swept: list[str] = field(default_factory=list)
    kept: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (vpath, tool message)
    changed: list[str] = field(default_factory=list)  # listed, but changed since: kept
    cancelled: bool = False

    def to_json(self) -> dict[str, object]:
        return {"swept": list(self.swept), "kept": self.kept}


def is_expired(memory: Memory, now: float, t: Thresholds) -> bool:
    if memory.is_index or memory.read_error or memory.category not in SWEPT_CATEGORIES:
        return False
    return lifecycle(memory.category, memory.mtime, now, t).status == "expired"


def plan_from(memories: Iterable[Memory], now: float, t: Thresholds) -> SweepPlan:
    expired: list[Expired] = []
    total = 0
    for m in memories:
        if m.is_index:
            continue
        total += 1
        if is_expired(m, now, t):
            age = lifecycle(m.category, m.mtime, now, t).age_days
            expired.append(Expired(m.vpath, m.category, age, m.mtime, m.size, _key(m)))
    return SweepPlan(tuple(sorted(expired, key=lambda e: e.vpath)), total)


def _key(memory: Memory) -> int | None:
    """The file's freshness key: the reading's, or (a reading too close to the file's last change to be
    kept by a cache) the file's own now. A sweep compares two looks of its own, never a cache."""
    return memory.key if memory.key != UNSURE else key_at(memory.location)


def plan_token(root: Path, plan: SweepPlan, t: Thresholds) -> str:
    """Names exactly this list: the store, every listed path with the freshness key it was listed with,
    and the thresholds that made them expired. Any difference gives another token."""
    canonical = json.dumps(
        {
            "root": os.fspath(root),
            "thresholds": [t.episodic_days, t.session_hours],
            "files": [[e.vpath, e.key] for e in plan.expired],
            "total": plan.total,
        },
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def disk_memories(root: Path) -> Iterable[Memory]:
    files, _ = scan(root)
    return (load(path, vpath, is_index=is_index) for path, vpath, is_index in files)


def plan_sweep(root: Path, t: Thresholds | None = None, now: float | None = None) -> SweepPlan:
    """What a sweep would delete now (the dry run)."""
    return plan_from(disk_memories(root), time.time() if now is None else now, t or Thresholds())


def _check(root: Path, item: Expired, now: float, t: Thresholds) -> str:
    """ "expired": delete it; "kept": no longer expired; "changed": not the file that was listed."""
    from kin_memory.store.paths import real_path

    path = real_path(root, item.vpath)
    if not os.path.lexists(path):
        return "kept"  # gone already: nothing to delete, nothing to report
    memory = load(path, item.vpath)
    if item.key is not None and item.key != _key(memory):
        return "changed"
    return "expired" if is_expired(memory, now, t) else "kept"


def apply_sweep(
    root: Path,
    plan: SweepPlan,
    t: Thresholds | None = None,
    now: float | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> SweepResult:
    """Delete the plan's files that are still expired; `progress(done, total)` after each one."""
    from .commands import ToolContext, run_tool

    t = t or Thresholds()
    now = time.time() if now is None else now
    result = SweepResult()
    ctx = ToolContext(root=root, source="sweep")
    total = len(plan.expired)
    for done, item in enumerate(plan.expired, 1):
        if cancelled is not None and cancelled():
            result.cancelled = True
            break
        state = _check(root, item, now, t)
        if state == "changed":
            result.changed.append(item.vpath)
        elif state == "expired":
            res = run_tool({"command": "delete", "path": item.vpath}, ctx)
            if res.is_error:
                result.failed.append((item.vpath, res.content))
            else:
                result.swept.append(item.vpath)
        if progress is not None:
            progress(done, total)
    result.kept = plan.total - len(result.swept)
    remove_stale_temps(root, now)
    return result


def remove_stale_temps(root: Path, now: float | None = None) -> int:
    """Delete temp files left by writers killed mid-write (hidden, never read; only clutter).

    os.fwalk hands out directory fds and never follows links, so this stays inside the store.
    """
    now = time.time() if now is None else now
    removed = 0
    try:
        walker = os.fwalk(root)
        for _dirpath, dirnames, filenames, dir_fd in walker:
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                if not name.startswith(TEMP_PREFIX):
                    continue
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TEMP_SECONDS:
                        os.unlink(name, dir_fd=dir_fd)
                        removed += 1
                except OSError:
                    continue
    except OSError:
        pass
    return removed
