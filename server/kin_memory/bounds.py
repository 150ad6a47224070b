"""Numbers that come from outside (a command-line argument, an editor's command, an agent's tool call)
checked against their range before they reach SQLite, a socket or a date: one rule and one sentence for
every door. Python's integers have no size, SQLite's and the OS's do: an unchecked 10**22 is a crash
deep down (or an answer that never comes), never the user's mistake told back to them."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

SQLITE_MAX = 2**63 - 1  # the largest INTEGER SQLite stores: every row id (a version number) is below it
# What the command line's options accept: more is a mistake (and a crash in timedelta or a socket).
MAX_DAYS = 36_500  # a century: expiry ages (sweep)
MAX_TOOL_CALLS = 1_000  # a model pass's tool calls
MAX_TIMEOUT = 86_400.0  # seconds: a model request's timeout (a day)
SHOWN_DIGITS = 40  # a number longer than this is described, not printed (Python refuses 4,300+ digits)


class OutOfRange(ValueError):
    """A number outside what its door accepts; the message is a sentence naming it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def shown(value: object) -> str | None:
    """A number as a message shows it: whole, unless it is absurdly long; None for what is no number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and abs(value) >= 10**SHOWN_DIGITS:
        return f"a number of more than {SHOWN_DIGITS} digits"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and math.isinf(value):
        return "infinity" if value > 0 else "minus infinity"
    return str(value)


def _num(x: float) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def _range(low: float, high: float) -> str:
    return f"from {_num(low)} to {_num(high)}"


def _sentence(what: str, kind: str, low: float, high: float, value: object) -> str:
    seen = shown(value)
    return f"{what} must be {kind} {_range(low, high)}{'' if seen is None else ', not ' + seen}".strip()


def whole(value: object, what: str, low: int = 1, high: int = SQLITE_MAX) -> int:
    """`value` when it is a whole number from `low` to `high` (a bool is not one); else OutOfRange:
    "`what` must be a whole number from 1 to 100, not 0"."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise OutOfRange(_sentence(what, "a whole number", low, high, value))
    return value


def in_range(value: int, low: int = 1, high: int = SQLITE_MAX) -> bool:
    """Whether a whole number is one its door can look up at all (an id SQLite can hold)."""
    return not isinstance(value, bool) and isinstance(value, int) and low <= value <= high


def real(value: object, what: str, low: float, high: float) -> float:
    """`value` as a finite number from `low` to `high` (infinity and NaN are not); else OutOfRange."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise OutOfRange(_sentence(what, "a number", low, high, value))
    if not low <= value <= high:
        raise OutOfRange(_sentence(what, "a number", low, high, value))
    return float(value)


def whole_arg(low: int, high: int) -> Callable[[str], int]:
    """An argparse `type=` for a bounded whole number: a bad one is argparse's usage error (exit 2),
    "argument --port: must be a whole number from 0 to 65535, not 70000"."""

    def parse(text: str) -> int:
        try:
            return whole(int(text), "", low, high)
        except OutOfRange as exc:
            raise argparse.ArgumentTypeError(exc.message) from None
        except ValueError:  # not digits, or more digits than Python converts
            raise argparse.ArgumentTypeError(f"must be a whole number {_range(low, high)}") from None

    return parse


def real_arg(low: float, high: float) -> Callable[[str], float]:
    """An argparse `type=` for a bounded finite number (infinity and NaN refused)."""

    def parse(text: str) -> float:
        try:
            return real(float(text), "", low, high)
        except OutOfRange as exc:
            raise argparse.ArgumentTypeError(exc.message) from None
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number {_range(low, high)}") from None

    return parse
