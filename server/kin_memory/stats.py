"""The store's health at a glance (`kin.memory.stats`, `kin-memory stats`).

Nothing here is computed a second way: statuses are the lifecycle's, quiet is KM301's test, the groups
are the consolidation candidates' duplicates and contradictions (KM601/KM604's measures), the prompt
block's numbers are `kin.memory.indexPreview`'s. The language server and the CLI pass what they know of
the index and the review queue, so both answer the same result over the same store.

Scope: counts, what expires soon and quiet memories cover the whole store (a sweep and a moved
repository concern every memory, and a quiet memory is by definition invisible from the workspace that
wrote it); the groups and the prompt block are what the active workspaces see, as the agent does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone

from .consolidate.candidates import survey
from .findings.workspace import gone_quiet
from .protocol import (
    CategoryCounts,
    ExpiringMemory,
    IndexState,
    MemoryGroup,
    PromptBlockSize,
    QuietRepository,
    StatsResult,
)
from .recall.results import index_preview_result
from .store.categories import CATEGORIES, EPISODIC, SESSION
from .store.context import Context
from .store.lifecycle import lifecycle
from .store.memory import Memory
from .store.prompt_block import MAX_BYTES, MAX_LINES, compose
from .store.root import RootChoice
from .store.store import Store

SOON_DAYS = 7  # "expires soon": swept within this many days
GROUP_KINDS = ("duplicate", "contradiction")


def memory_status(memory: Memory, ctx: Context) -> str:
    """The one status a memory counts under: quiet wins over the lifecycle's."""
    if gone_quiet(memory.stamp, ctx):
        return "quiet"
    return lifecycle(memory.category, memory.mtime, ctx.now, ctx.thresholds).status


def by_category(memories: Iterable[Memory], ctx: Context) -> dict[str, CategoryCounts]:
    counts = {
        c: dict.fromkeys(("total", "ok", "stale", "expiring", "expired", "quiet"), 0) for c in CATEGORIES
    }
    for m in memories:
        row = counts.get(m.category)
        if row is None:  # the read-time fallback makes every category one of the four
            continue
        row["total"] += 1
        row[memory_status(m, ctx)] += 1
    return {c: CategoryCounts(**row) for c, row in counts.items()}


def expiring_soon(
    memories: Iterable[Memory], ctx: Context, uri_of: Callable[[str], str]
) -> list[ExpiringMemory]:
    """Memories a sweep deletes within SOON_DAYS (not those already expired), soonest first."""
    horizon = ctx.now + SOON_DAYS * 86400
    found: list[tuple[float, str, Memory]] = []
    for m in memories:
        life = lifecycle(m.category, m.mtime, ctx.now, ctx.thresholds)
        if m.category not in (EPISODIC, SESSION) or life.due is None:
            continue
        due = life.due.timestamp()  # past for an expired memory: not "soon"
        if ctx.now <= due <= horizon:
            found.append((due, m.vpath, m))
    return [
        ExpiringMemory(
            path=m.vpath,
            uri=uri_of(m.vpath),
            category=m.category,  # type: ignore[arg-type]  # one of the four (read-time fallback)
            expires=datetime.fromtimestamp(due, timezone.utc).strftime("%Y-%m-%d"),
            days=round((due - ctx.now) / 86400),
        )
        for due, _, m in sorted(found, key=lambda f: (f[0], f[1]))
    ]


def quiet_by_repository(
    memories: Iterable[Memory], ctx: Context, uri_of: Callable[[str], str]
) -> list[QuietRepository]:
    by_stamp: dict[str, list[str]] = {}
    for m in memories:
        if gone_quiet(m.stamp, ctx):
            by_stamp.setdefault(str(m.stamp), []).append(m.vpath)
    return [
        QuietRepository(workspace=stamp, paths=sorted(paths), uris=[uri_of(p) for p in sorted(paths)])
        for stamp, paths in sorted(by_stamp.items())
    ]


def groups(store: Store, ctx: Context, uri_of: Callable[[str], str]) -> list[MemoryGroup]:
    return [
        MemoryGroup(kind=c.kind, paths=list(c.paths), uris=[uri_of(p) for p in c.paths], reason=c.reason)  # type: ignore[arg-type]  # filtered to the group kinds
        for c in survey(store, ctx.active, ctx.now, ctx.thresholds)
        if c.kind in GROUP_KINDS
    ]


class GroupsMemo:
    """The last groups, reused while no memory changed. The candidates pass reads every memory whole
    (seconds on a large store) and a health view is refreshed often; duplicates and contradictions depend
    on the memories' text and the active workspaces only, not on the clock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[object, list[MemoryGroup]] | None = None

    def groups(self, store: Store, ctx: Context, uri_of: Callable[[str], str]) -> list[MemoryGroup]:
        key = (ctx.active, sorted((m.vpath, m.mtime, m.size, hash(m.text)) for m in store.memories()))
        with self._lock:
            if self._last is not None and self._last[0] == key:
                return self._last[1]
        found = groups(store, ctx, uri_of)
        with self._lock:
            self._last = (key, found)
        return found


def prompt_block_size(store: Store, active: tuple[str, ...]) -> PromptBlockSize:
    preview = index_preview_result(compose(list(store.memories()), store.index_file(), active))
    return PromptBlockSize(
        lines=preview.lines,
        bytes=preview.bytes,
        max_lines=MAX_LINES,
        max_bytes=MAX_BYTES,
        truncated=preview.truncated,
    )


def store_stats(
    store: Store,
    ctx: Context,
    *,
    root: RootChoice,
    memory_enabled: bool,
    index: IndexState,
    review_queue: int,
    uri_of: Callable[[str], str],
    memo: GroupsMemo | None = None,
) -> StatsResult:
    memories: Sequence[Memory] = sorted(store.memories(), key=lambda m: m.vpath)
    return StatsResult(
        by_category=by_category(memories, ctx),  # type: ignore[arg-type]  # keys are the categories
        expiring_soon=expiring_soon(memories, ctx, uri_of),
        quiet_by_repository=quiet_by_repository(memories, ctx, uri_of),
        groups=memo.groups(store, ctx, uri_of) if memo else groups(store, ctx, uri_of),
        prompt_block=prompt_block_size(store, ctx.active),
        review_queue=review_queue,
        index_state=index,
        memory_enabled=memory_enabled,
        root=str(root.path),
        root_source=root.source,
        workspaces=list(ctx.active),
    )
