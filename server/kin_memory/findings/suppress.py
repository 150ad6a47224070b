"""In-file suppression: `<!-- kin-memory: disable KM400 KM105 -->` silences codes in the whole file;
`<!-- kin-memory: disable-next-line KM602 -->` silences them on the line below only (what "Mark as not a
secret" writes: one value the person judged, not every secret the file may hold later)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..store.frontmatter import Span
from ..store.memory import Memory
from .catalog import CATALOG
from .model import Finding

_DIRECTIVE = re.compile(r"<!--\s*kin-memory:\s*(disable(?:-next-line)?)\s+([^>]*?)\s*-->")
_CODE = re.compile(r"[A-Za-z0-9]+")
NEXT_LINE = "disable-next-line"


@dataclass(frozen=True)
class Silenced:
    """What a file's directives silence: codes everywhere, and codes on one line."""

    everywhere: frozenset[str] = frozenset()
    lines: dict[int, frozenset[str]] = field(default_factory=dict)

    def covers(self, code: str, line: int) -> bool:
        return code in self.everywhere or code in self.lines.get(line, ())


def read_directives(lines: Sequence[str]) -> tuple[Silenced, list[Finding]]:
    """The directives of a file's lines, and a KM901 for each code they name that is not one."""
    everywhere: set[str] = set()
    below: dict[int, set[str]] = {}
    problems: list[Finding] = []
    for n, line in enumerate(lines):
        if "kin-memory:" not in line:
            continue
        for m in _DIRECTIVE.finditer(line):
            codes = everywhere if m.group(1) != NEXT_LINE else below.setdefault(n + 1, set())
            for c in _CODE.finditer(m.group(2)):
                code = c.group(0).upper()
                if code in CATALOG:
                    codes.add(code)
                else:
                    start = m.start(2) + c.start()
                    problems.append(
                        Finding(
                            "KM901",
                            Span(n, start, n, start + len(c.group(0))),
                            f"suppression names an unknown code `{c.group(0)}`",
                            severity="warning",
                        )
                    )
    silenced = Silenced(frozenset(everywhere), {n: frozenset(c) for n, c in below.items() if c})
    return silenced, problems


def silenced(lines: Sequence[str]) -> Silenced:
    return read_directives(lines)[0]


def apply(memory: Memory, findings: list[Finding]) -> list[Finding]:
    if memory.text and "kin-memory:" not in memory.text:
        # No directive anywhere (a memory's lines are its text cut at line breaks, and a directive holds
        # none): one search of the text instead of one per line.
        return list(findings)
    found, problems = read_directives(memory.lines)
    return [f for f in findings if not found.covers(f.code, f.span.line)] + problems
