"""KM400–KM404: stale, expiring and expired memories."""

from __future__ import annotations

from ..store.categories import PROJECT_FACT
from ..store.context import Context
from ..store.lifecycle import lifecycle
from ..store.memory import Memory
from .edits import replace
from .lifecycle_messages import lifecycle_message
from .model import Finding, Fix, line_span

# The fixes that hold nothing of the file: made once (a fix is a value).
DELETE = Fix("Delete this memory", command="delete")
MARK_REVIEWED = Fix("Mark reviewed (touch the file)", command="markReviewed", preferred=True)


def check(memory: Memory, ctx: Context) -> list[Finding]:
    if memory.is_index or memory.read_error:
        return []
    life = lifecycle(memory.category, memory.mtime, ctx.now, ctx.thresholds)
    said = lifecycle_message(memory.category, life, ctx.thresholds)
    if said is None:
        return []
    code, message = said
    entry = memory.frontmatter.get("category") if memory.frontmatter.status == "ok" else None
    span = entry.value_span if entry else line_span(memory.lines, 0)
    fixes: tuple[Fix, ...] = ()
    if code == "KM400":
        fixes = (MARK_REVIEWED,)
    elif code == "KM402" and entry is not None:
        fixes = (DELETE, Fix("Convert to project-fact (keep it)", (replace(entry.value_span, PROJECT_FACT),)))
    elif code == "KM402":
        fixes = (DELETE,)
    elif code == "KM404":
        fixes = (DELETE,)
    return [Finding(code, span, message, fixes)]
