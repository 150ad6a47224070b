"""Findings as domain objects: code, range, message and fixes; the LSP shell and the CLI translate them."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.span import Span
from .catalog import default_severity

# The values below are frozen, and made by the thousand in a whole-store check (a finding or more per file,
# most with a fix): each sets its fields in one step, not one frozen __setattr__ call per field, which was
# most of what making one cost.


@dataclass(frozen=True, init=False)
class TextEdit:
    """Replace `span` with `new_text`."""

    span: Span
    new_text: str

    def __init__(self, span: Span, new_text: str) -> None:
        self.__dict__.update(span=span, new_text=new_text)


@dataclass(frozen=True, init=False)
class Fix:
    """A quick fix: text edits in the same file, or a command (mark reviewed, delete) for the shell."""

    title: str
    edits: tuple[TextEdit, ...] = ()
    command: str | None = None  # "markReviewed", "delete", "restampAll", "resolveConflict", "compareConflict"
    preferred: bool = False
    argument: tuple[tuple[str, str], ...] = ()  # the command's argument as pairs (restampAll: stamp, to)

    def __init__(
        self,
        title: str,
        edits: tuple[TextEdit, ...] = (),
        command: str | None = None,
        preferred: bool = False,
        argument: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.__dict__.update(
            title=title, edits=edits, command=command, preferred=preferred, argument=argument
        )


@dataclass(frozen=True)
class Related:
    vpath: str
    span: Span
    message: str


@dataclass(frozen=True, init=False)
class Finding:
    """One finding: its code, range and message, its quick fixes, related places, and its severity (the
    code's default unless given)."""

    code: str
    span: Span
    message: str
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    severity: str = ""

    def __init__(
        self,
        code: str,
        span: Span,
        message: str,
        fixes: tuple[Fix, ...] = (),
        related: tuple[Related, ...] = (),
        severity: str = "",
    ) -> None:
        self.__dict__.update(
            code=code,
            span=span,
            message=message,
            fixes=fixes,
            related=related,
            severity=severity or default_severity(code),
        )


def line_span(lines: tuple[str, ...] | list[str], n: int) -> Span:
    n = max(0, min(n, len(lines) - 1)) if lines else 0
    text = lines[n] if lines else ""
    return Span(n, 0, n, len(text))
