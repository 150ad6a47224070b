"""The block composed for other agents (the MCP resource `memory://prompt-block`).

The seed's agent inlines its own block (prompt_block.py: the listing first, then MEMORY.md, capped at 200
lines / 25 KB) and that stays exact for `index-preview` and KM500/KM501. An agent that reads the block
through MCP gets a different order, for two reasons: with a few hundred memories the listing alone fills
the cap and MEMORY.md, the index the person or the agent keeps on purpose, is cut whole; and a cut list
that does not say it is cut reads as "these are all the memories". So here MEMORY.md comes first, then the
listing with this workspace's memories and the preferences before the rest, newest first; and when the
cap cuts, the block's own last line says how many memories were left out and how to reach them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..wording import counted
from .memory import Memory
from .prompt_block import MAX_BYTES, MAX_LINES, listing_line
from .workspace import visibility


@dataclass(frozen=True)
class AgentBlock:
    text: str
    listed: int  # memories whose line is in the block
    left_out: int  # visible memories whose line the cap left out
    index_cut: bool  # MEMORY.md itself was cut short


def _size(line: str) -> int:
    return len(line.encode("utf-8", "surrogatepass")) + 1


def _ranked(memories: Iterable[Memory], active: tuple[str, ...]) -> list[Memory]:
    """Visible, listable memories: this workspace's and the preferences first, then the rest; newest first
    within each; the path breaks ties so the order is stable."""
    own = set(active)
    by_stamp: dict[object, bool] = {}  # thousands of memories share a handful of stamps

    def seen(stamp: object) -> bool:
        if not isinstance(stamp, (str, type(None))):
            return visibility(stamp, active).visible  # a list or a mapping: not a key, and rare
        known = by_stamp.get(stamp)
        if known is None:
            known = by_stamp[stamp] = visibility(stamp, active).visible
        return known

    visible = [m for m in memories if m.category != "session" and not m.is_index and seen(m.stamp)]

    def key(m: Memory) -> tuple[int, float, str]:
        first = m.category == "preference" or (isinstance(m.stamp, str) and m.stamp in own)
        return (0 if first else 1, -m.mtime, m.vpath)

    return sorted(visible, key=key)


def last_line(left_out: int, index_cut: bool) -> str:
    parts = []
    if index_cut:
        parts.append("MEMORY.md was cut short")
    if left_out:
        parts.append(f"{counted(left_out, 'more memory', 'more memories')} not listed")
    return f"- … {' and '.join(parts)}: find them with memory_search, or view /memories."


def compose_for_agents(
    memories: Iterable[Memory], index: Memory | None, active: tuple[str, ...]
) -> AgentBlock:
    ranked = _ranked(memories, active)
    head = ["# Memory"]
    if index is not None and not index.read_error:
        head += ["", "## MEMORY.md", *index.lines, ""]
    head.append("## Memories")
    # Room for the closing line is kept before anything is placed, so the block never passes the caps.
    reserve = _size(last_line(len(ranked), True))
    lines: list[str] = []
    used = 0
    index_cut = False
    for n, line in enumerate(head):
        if len(lines) + 2 > MAX_LINES or used + _size(line) + reserve > MAX_BYTES:
            index_cut = n < len(head) - 1  # only the "## Memories" heading is not MEMORY.md
            break
        lines.append(line)
        used += _size(line)
    listed = 0
    if not index_cut:
        for memory in ranked:
            line = listing_line(memory)
            if len(lines) + 2 > MAX_LINES or used + _size(line) + reserve > MAX_BYTES:
                break
            lines.append(line)
            used += _size(line)
            listed += 1
    left_out = len(ranked) - listed
    if left_out or index_cut:
        lines.append(last_line(left_out, index_cut))
    return AgentBlock("\n".join(lines), listed, left_out, index_cut)
