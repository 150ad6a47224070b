"""A range in a document: its own module, so findings can be made without loading the YAML parser."""

from __future__ import annotations

from dataclasses import dataclass

from .slotted import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class Span:
    """A 0-based range in document coordinates: lines and Python string (code point) columns."""

    line: int
    col: int
    end_line: int
    end_col: int
