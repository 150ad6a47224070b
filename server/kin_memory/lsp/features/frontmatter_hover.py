"""Hover text for frontmatter keys and values: meaning, exact lifecycle dates, visibility.

Values come from the file (untrusted) and workspace paths from the editor: each is quoted through the
markdown sink's code span, which no backtick, blank line, link or HTML inside the value can leave.
"""

from __future__ import annotations

from ...sinks import markdown
from ...store.categories import CATEGORIES, DESCRIPTIONS
from ...store.context import Context
from ...store.lifecycle import lifecycle
from ...store.memory import Memory
from ...store.workspace import visibility
from ...wording import untouched


def _inside(span, line: int, col: int) -> bool:
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


MAX_VALUE = 300  # characters of a quoted value; the rest is elided


def _code(text: str) -> str:
    return markdown.code_span(text, MAX_VALUE)


def frontmatter_hover(memory: Memory, line: int, col: int, ctx: Context) -> str | None:
    for entry in memory.frontmatter.entries:
        if not (_inside(entry.key_span, line, col) or _inside(entry.value_span, line, col)):
            continue
        t = ctx.thresholds
        life = lifecycle(memory.category, memory.mtime, ctx.now, t)
        if entry.key == "category":
            desc = DESCRIPTIONS.get(memory.category, "").format(
                stale=int(t.stale_days), episodic=int(t.episodic_days), session=int(t.session_hours)
            )
            read = (
                ""
                if entry.value in CATEGORIES
                else f" (the value {_code(str(entry.raw))} reads as project-fact)"
            )
            return (
                f"**category: {memory.category}**{read}\n\n{desc}.\n\nLifecycle: {life.label} "
                f"({untouched(life.age_days)})."
            )
        if entry.key == "workspace":
            vis = visibility(memory.stamp, ctx.active)
            where = (
                "every workspace"
                if vis.scope in ("global", "global (no stamp)")
                else f"only {_code(str(memory.stamp))}"
            )
            active = ", ".join(_code(a) for a in ctx.active) or "none (operator view: everything is visible)"
            state = "visible" if vis.visible else "not visible"
            return (
                f"**workspace** — which repository sees this memory.\n\nSeen from {where}; "
                f"{state} from the active workspace ({active})."
            )
    return None
