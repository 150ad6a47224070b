"""Small pieces of wording shared by every message: counts with the right noun, ages in whole days.

Messages are sentences a user reads in an editor or a terminal: "1 memory", never "1 memories"; "touched
today", never "untouched for 0 days".
"""

from __future__ import annotations


def counted(n: int, one: str, many: str | None = None) -> str:
    """`n` with its noun: counted(1, "memory", "memories") == "1 memory"."""
    return f"{n} {one}" if n == 1 else f"{n} {many or one + 's'}"


def sentence(text: str) -> str:
    """A fragment ("reflection is not configured: set …") as an editor shows a refusal: capitalised,
    ending with a full stop. The command line keeps its own lower-case "kin-memory: …" style."""
    if not text:
        return text
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "?", "!")) else ".")


def untouched(age_days: float) -> str:
    """How long a memory has gone without a write, in whole days."""
    days = int(age_days)
    if days < 1:
        return "touched today"
    return f"untouched for {counted(days, 'day')}"


def value_kind(value: object) -> str:
    """A settings or frontmatter value's type in plain words (not a Python type name)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return "a date or time" if hasattr(value, "isoformat") else "another kind of value"
