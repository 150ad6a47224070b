"""The block the agent inlines at session start: the memory listing plus MEMORY.md, capped."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from operator import itemgetter
from typing import NamedTuple, Protocol

from ..sinks import prompt
from ..sinks.controls import nothing_to_escape
from ..wording import counted
from .memory import Memory
from .workspace import visibility

MAX_LINES = 200
MAX_BYTES = 25 * 1024


class BlockLine(NamedTuple):  # a tuple: a 100k-memory store's block makes 100k of them
    text: str
    source: str  # "listing", "summary", "index" (a MEMORY.md line) or "header"
    index_line: int = -1  # the MEMORY.md line number for index lines


@dataclass(frozen=True)
class PromptBlock:
    lines: tuple[BlockLine, ...]
    kept: int  # how many lines fit under both caps
    cut_reason: str = ""  # "lines", "bytes" or ""
    cut_byte_line: int = -1  # the line at which the byte cap falls
    cut_byte_col: int = 0
    hidden: int = 0  # foreign-workspace files collapsed into the summary line
    extra: dict[str, int] = field(default_factory=dict)
    # Listing lines past the line cap, counted but not made: they come after the first MAX_LINES listing
    # lines and before the summary line (a 100k-memory store's block made 100k lines nobody sees).
    omitted: int = 0

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines[: self.kept])

    @property
    def count(self) -> int:
        """Every line of the block, those past the cap included."""
        return len(self.lines) + self.omitted

    @property
    def truncated(self) -> bool:
        return self.kept < self.count


class Listable(Protocol):
    """What the listing reads of a memory: a Memory, or its parts where no Memory was made (a whole-store
    check that only prints has each file's compact record, and making 100k memories of them for the
    listing alone cost more than the listing)."""

    @property
    def vpath(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def stamp(self) -> object: ...
    @property
    def title(self) -> str: ...


def listing_line(memory: Listable) -> str:
    """One line per memory, whatever its name or title holds: both go through the prompt sink, so a
    newline in a file name is shown as `\\n` and can never add a line to the agent's prompt."""
    return line_of(memory.vpath, memory.category, memory.title)


def line_of(vpath: str, category: str, title: str) -> str:
    line = f"- {vpath} ({category}) — {title}"
    if nothing_to_escape(line):  # nearly every line: the name and the title as they are
        return line
    return f"- {prompt.field(vpath)} ({category}) — {prompt.field(title)}"


def listing(memories: Iterable[Listable], active: tuple[str, ...]) -> tuple[list[tuple[str, str]], int]:
    """(vpath, listing line) for every memory the agent would list, and how many are hidden.

    Split from compose so shards of the store can be listed separately and merged (sorted by vpath).
    """
    shown, hidden = _visible(memories, active)
    return [(memory.vpath, listing_line(memory)) for memory in shown], hidden


def first_listing(
    memories: Iterable[Listable], active: tuple[str, ...]
) -> tuple[list[tuple[str, str]], int, int]:
    """listing's first MAX_LINES lines by path, how many lines it has, and how many memories are hidden:
    a shard of a split check lists only what the block can show (see first_by_path), and making the
    lines of all its files cost 4 ms of a 10k store's check."""
    shown, hidden = _visible(memories, active)
    first = shown if len(shown) <= MAX_LINES else heapq.nsmallest(MAX_LINES, shown, key=_vpath_of)
    return [(memory.vpath, listing_line(memory)) for memory in first], len(shown), hidden


def _vpath_of(memory: Listable) -> str:
    return memory.vpath


def _visible(memories: Iterable[Listable], active: tuple[str, ...]) -> tuple[list[Listable], int]:
    """The memories the agent would list, and how many others are hidden (sessions are neither)."""
    shown: list[Listable] = []
    hidden = 0
    seen: dict[object, bool] = {}  # visibility by stamp: a store has few distinct stamps
    for memory in memories:
        if memory.category == "session":
            continue
        stamp = memory.stamp
        try:
            visible = seen.get(stamp)
        except TypeError:  # a stamp that is not a string (a YAML list): judged each time
            visible = visibility(stamp, active).visible
        else:
            if visible is None:
                visible = seen[stamp] = visibility(stamp, active).visible
        if visible:
            shown.append(memory)
        else:
            hidden += 1
    return shown, hidden


def compose(memories: Iterable[Listable], index: Memory | None, active: tuple[str, ...]) -> PromptBlock:
    listed, hidden = listing(memories, active)
    return compose_from(listed, hidden, index)


def first_by_path(listed: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The listing's first MAX_LINES lines by path: past the line cap no line is shown and only their
    count matters (a 100k-memory store's full sort took a tenth of a second of every check of MEMORY.md,
    and making its lines another twentieth)."""
    if len(listed) <= MAX_LINES:
        return sorted(listed)
    return heapq.nsmallest(MAX_LINES, listed)


def compose_from(
    listed: list[tuple[str, str]], hidden: int, index: Memory | None, total: int | None = None
) -> PromptBlock:
    """The block of these listing lines. `total`: how many lines the listing has when `listed` holds
    only some of them, the first MAX_LINES by path among them (see first_by_path)."""
    lines = [BlockLine("# Memory", "header")]
    # Made in C (`tuple.__new__`, not the named tuple's own constructor): 100k lines at 100k memories.
    make = partial(tuple.__new__, BlockLine)
    shown = first_by_path(listed)
    lines += map(make, zip(map(itemgetter(1), shown), repeat("listing"), repeat(-1)))
    omitted = (len(listed) if total is None else total) - len(shown)
    if hidden:
        lines.append(
            BlockLine(
                f"- … and {counted(hidden, 'memory', 'memories')} of other workspaces (not listed)", "summary"
            )
        )
    if index is not None and not index.read_error:
        lines.append(BlockLine("", "header"))
        lines.append(BlockLine("## MEMORY.md", "header"))
        for n, text in enumerate(index.lines):
            lines.append(BlockLine(text, "index", n))
    count = len(lines) + omitted
    kept = min(count, MAX_LINES)
    reason = "lines" if count > MAX_LINES else ""
    used = 0
    cut_line, cut_col = -1, 0
    for i, line in enumerate(lines[:kept]):
        size = len(line.text.encode("utf-8", "surrogatepass")) + 1
        if used + size > MAX_BYTES:
            room = MAX_BYTES - used
            encoded = line.text.encode("utf-8", "surrogatepass")[: max(room, 0)]
            cut_col = len(encoded.decode("utf-8", "ignore"))
            cut_line, kept, reason = i, i, "bytes"
            break
        used += size
    return PromptBlock(tuple(lines), kept, reason, cut_line, cut_col, hidden, omitted=omitted)
