"""KM200–KM203: the category value."""

from __future__ import annotations

from ..store.categories import CATEGORIES, closest, normalize
from ..store.context import Context
from ..store.frontmatter import Span
from ..store.memory import Memory
from .edits import insert_after_open, replace
from .model import Finding, Fix


def check(memory: Memory, ctx: Context) -> list[Finding]:
    fm = memory.frontmatter
    if memory.is_index or fm.status != "ok":
        return []
    entry = fm.get("category")
    if entry is None:
        fixes = tuple(
            Fix(f"Insert `category: {c}`", (insert_after_open(memory, f"category: {c}"),)) for c in CATEGORIES
        )
        return [
            Finding(
                "KM200", _open_span(memory), "`category` is missing: this memory reads as project-fact", fixes
            )
        ]
    if not entry.is_string:
        if entry.is_scalar and entry.value is None:
            fixes = tuple(Fix(f"Set `category: {c}`", (replace(entry.value_span, c),)) for c in CATEGORIES)
            return [
                Finding(
                    "KM200",
                    entry.key_span,
                    "`category` has no value: this memory reads as project-fact",
                    fixes,
                )
            ]
        shown = entry.raw or str(entry.value)
        fixes = tuple(Fix(f"Replace with `{c}`", (replace(entry.value_span, c),)) for c in CATEGORIES)
        return [
            Finding(
                "KM203",
                entry.value_span,
                f"category must be a string, got `{shown}`: reads as project-fact",
                fixes,
            )
        ]
    value = entry.value
    assert isinstance(value, str)
    if value in CATEGORIES:
        return []  # plain or YAML-quoted, the agent reads the same string
    norm = normalize(value)
    if norm in CATEGORIES:
        return [
            Finding(
                "KM202",
                entry.value_span,
                f"category `{entry.raw}` is not exactly `{norm}`: the agent compares exactly, so it reads as project-fact",
                (Fix(f"Normalize to `{norm}`", (replace(entry.value_span, norm),), preferred=True),),
            )
        ]
    guess = closest(value)
    hint = f"; did you mean `{guess}`?" if guess else f"; valid values: {', '.join(CATEGORIES)}"
    ordered = ([guess] if guess else []) + [c for c in CATEGORIES if c != guess]
    fixes = tuple(
        Fix(f"Replace with `{c}`", (replace(entry.value_span, c),), preferred=c == guess) for c in ordered
    )
    return [
        Finding(
            "KM201", entry.value_span, f"unrecognized category `{value}` reads as project-fact{hint}", fixes
        )
    ]


def _open_span(memory: Memory) -> Span:
    from .model import line_span

    return line_span(memory.lines, memory.frontmatter.open_line)
