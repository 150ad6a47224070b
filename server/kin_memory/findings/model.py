"""Findings as domain objects: code, range, message and fixes; the LSP shell and the CLI translate them."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.span import Span
from .catalog import default_severity


@dataclass(frozen=True)
class TextEdit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix: text edits in the same file, or a command (mark reviewed, delete) for the shell."""

    title: str
    edits: tuple[TextEdit, ...] = ()
    command: str | None = None  # "markReviewed", "delete", "restampAll", "resolveConflict", "compareConflict"
    preferred: bool = False
    argument: tuple[tuple[str, str], ...] = ()  # the command's argument as pairs (restampAll: stamp, to)


@dataclass(frozen=True)
class Related:
    vpath: str
    span: Span
    message: str


@dataclass(frozen=True)
class Finding:
    code: str
    span: Span
    message: str
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    severity: str = ""

    def __post_init__(self) -> None:
        if not self.severity:
            object.__setattr__(self, "severity", default_severity(self.code))


def line_span(lines: tuple[str, ...] | list[str], n: int) -> Span:
    n = max(0, min(n, len(lines) - 1)) if lines else 0
    text = lines[n] if lines else ""
    return Span(n, 0, n, len(text))
