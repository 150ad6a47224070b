"""KM400–KM404: stale, expiring and expired memories."""

from __future__ import annotations

from ..store.categories import EPISODIC, PROJECT_FACT, SESSION
from ..store.context import Context
from ..store.lifecycle import lifecycle
from ..store.memory import Memory
from ..wording import untouched
from .edits import replace
from .model import Finding, Fix, line_span


def check(memory: Memory, ctx: Context) -> list[Finding]:
    if memory.is_index or memory.read_error:
        return []
    t = ctx.thresholds
    life = lifecycle(memory.category, memory.mtime, ctx.now, t)
    entry = memory.frontmatter.get("category") if memory.frontmatter.status == "ok" else None
    span = entry.value_span if entry else line_span(memory.lines, 0)
    delete = Fix("Delete this memory", command="delete")
    if memory.category == PROJECT_FACT and life.status == "stale":
        return [
            Finding(
                "KM400",
                span,
                f"project fact {untouched(life.age_days)} (stale after {t.stale_days:g} days): review it, "
                "then mark it reviewed",
                (Fix("Mark reviewed (touch the file)", command="markReviewed", preferred=True),),
            )
        ]
    if memory.category == EPISODIC:
        if life.status == "expired":
            convert = (
                (Fix("Convert to project-fact (keep it)", (replace(entry.value_span, PROJECT_FACT),)),)
                if entry
                else ()
            )
            return [Finding("KM402", span, f"episodic memory {life.label}", (delete, *convert))]
        if life.status == "expiring":
            return [Finding("KM401", span, f"episodic memory {life.label}")]
    if memory.category == SESSION:
        if life.status == "expired":
            return [
                Finding("KM404", span, f"session memory {life.label}: the next sweep deletes it", (delete,))
            ]
        if life.status == "expiring":
            return [Finding("KM403", span, f"session memory {life.label}")]
    return []
