"""KM500–KM502: MEMORY.md against the prompt block's caps, and its links."""

from __future__ import annotations

import re
from collections.abc import Container
from pathlib import PurePosixPath

from ..store.context import Context
from ..store.frontmatter import Span
from ..store.memory import Memory
from ..store.paths import virtual_of_rel
from ..store.prompt_block import MAX_BYTES, MAX_LINES, PromptBlock
from .model import Finding

_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def link_targets(index: Memory) -> list[tuple[int, int, int, str]]:
    """(line, start, end, vpath) for every link in MEMORY.md that points at a local .md file."""
    out = []
    for n, line in enumerate(index.lines):
        for m in _LINK.finditer(line):
            target = m.group(1).split("#", 1)[0]
            if (
                not target
                or "://" in target
                or target.startswith(("mailto:", "#"))
                or not target.endswith(".md")
            ):
                continue
            if target.startswith("/memories/"):
                vpath = target
            else:
                parts = [p for p in PurePosixPath(target.lstrip("/")).parts if p not in (".",)]
                if ".." in parts:
                    vpath = ""
                else:
                    vpath = virtual_of_rel("/".join(parts))
            out.append((n, m.start(1), m.start(1) + len(m.group(1)), vpath))
    return out


def check(index: Memory, block: PromptBlock, known: Container[str], ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    last = len(index.lines) - 1
    end = (last, len(index.lines[last]))
    past_lines = [b.index_line for b in block.lines[MAX_LINES:] if b.source == "index"]
    if past_lines:
        first = past_lines[0]
        findings.append(
            Finding(
                "KM500",
                Span(first, 0, *end),
                f"{len(past_lines)} lines of MEMORY.md fall past the {MAX_LINES}-line cap of the prompt block "
                "(the listing of memories comes first): the agent never sees them",
            )
        )
    if block.cut_reason == "bytes":
        cut = block.lines[block.cut_byte_line]
        if cut.source == "index":
            findings.append(
                Finding(
                    "KM501",
                    Span(cut.index_line, block.cut_byte_col, *end),
                    f"MEMORY.md content from here falls past the {MAX_BYTES // 1024} KB cap of the prompt block",
                )
            )
    for n, start, stop, vpath in link_targets(index):
        if vpath not in known:
            findings.append(
                Finding(
                    "KM502",
                    Span(n, start, n, stop),
                    f"MEMORY.md links to {vpath or 'a path outside the store'}, which does not exist",
                )
            )
    return findings
