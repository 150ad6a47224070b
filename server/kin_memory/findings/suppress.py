"""In-file suppression: `<!-- kin-memory: disable KM400 KM105 -->`."""

from __future__ import annotations

import re

from ..store.frontmatter import Span
from ..store.memory import Memory
from .catalog import CATALOG
from .model import Finding

_DIRECTIVE = re.compile(r"<!--\s*kin-memory:\s*disable\s+([^>]*?)\s*-->")
_CODE = re.compile(r"[A-Za-z0-9]+")


def directives(memory: Memory) -> tuple[set[str], list[Finding]]:
    codes: set[str] = set()
    problems: list[Finding] = []
    for n, line in enumerate(memory.lines):
        if "kin-memory:" not in line:
            continue
        for m in _DIRECTIVE.finditer(line):
            for c in _CODE.finditer(m.group(1)):
                code = c.group(0).upper()
                if code in CATALOG:
                    codes.add(code)
                else:
                    start = m.start(1) + c.start()
                    problems.append(
                        Finding(
                            "KM901",
                            Span(n, start, n, start + len(c.group(0))),
                            f"suppression names an unknown code `{c.group(0)}`",
                            severity="warning",
                        )
                    )
    return codes, problems


def apply(memory: Memory, findings: list[Finding]) -> list[Finding]:
    codes, problems = directives(memory)
    return [f for f in findings if f.code not in codes] + problems
