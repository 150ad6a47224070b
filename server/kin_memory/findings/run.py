"""Run every finding family over a file or the whole store."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import replace
from typing import TYPE_CHECKING

from ..store.context import Context
from ..store.memory import Memory
from ..store.prompt_block import PromptBlock, compose
from . import budget, category, content, frontmatter, lifecycle, suppress, workspace
from .model import Finding

if TYPE_CHECKING:  # a whole-store check by file (the CLI's) has no Store: its module is not imported for it
    from ..store.store import Store

FAMILIES = (content.check, frontmatter.check, category.check, workspace.check, lifecycle.check)


def check_memory(
    memory: Memory, ctx: Context, *, block: PromptBlock | None = None, known: Container[str] | None = None
) -> list[Finding]:
    """Findings for one file. MEMORY.md additionally needs the composed prompt block and the known paths."""
    findings: list[Finding] = []
    for family in FAMILIES:
        findings += family(memory, ctx)
    if memory.is_index and block is not None and known is not None and not memory.read_error:
        findings += budget.check(memory, block, known, ctx)
    findings = suppress.apply(memory, findings)
    return _with_severity(findings, ctx)


def _with_severity(findings: list[Finding], ctx: Context) -> list[Finding]:
    if not ctx.severity:
        return findings
    out = []
    for f in findings:
        level = ctx.severity.get(f.code)
        if level == "off":
            continue
        out.append(replace(f, severity=level) if level in ("error", "warning", "information", "hint") else f)
    return out


def check_store(store: Store, ctx: Context) -> dict[str, list[Finding]]:
    """vpath → findings for every file of the store (files without findings map to [])."""
    memories = list(store.memories())
    index = store.index_file()
    result: dict[str, list[Finding]] = {m.vpath: check_memory(_whole(store, m), ctx) for m in memories}
    if index is not None:
        block = compose(memories, index, ctx.active)
        known = {m.vpath for m in memories}
        result[index.vpath] = check_memory(index, ctx, block=block, known=known)
    return result


def _whole(store: Store, memory: Memory) -> Memory:
    """A compacted memory has no text left to check: read it whole again."""
    return (store.get(memory.vpath) or memory) if memory.compact else memory
