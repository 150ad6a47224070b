"""The one rule for numbers from outside (bounds.py): a whole number or a finite number in range passes,
anything else is a sentence naming the number as a person would read it."""

from __future__ import annotations

import argparse

import pytest

from kin_memory.bounds import SQLITE_MAX, OutOfRange, in_range, real, real_arg, whole, whole_arg


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (0, "limit must be a whole number from 1 to 100, not 0"),
        (10**22, "limit must be a whole number from 1 to 100, not 10000000000000000000000"),
        (10**5000, "limit must be a whole number from 1 to 100, not a number of more than 40 digits"),
        (True, "limit must be a whole number from 1 to 100"),
        ("5", "limit must be a whole number from 1 to 100"),
        (2.0, "limit must be a whole number from 1 to 100, not 2.0"),
    ],
    ids=["zero", "huge", "enormous", "bool", "string", "float"],
)
def test_whole_numbers_out_of_range_are_sentences(value: object, said: str) -> None:
    with pytest.raises(OutOfRange) as caught:
        whole(value, "limit", 1, 100)
    assert caught.value.message == said


def test_in_range_is_what_sqlite_can_hold() -> None:
    assert in_range(1) and in_range(SQLITE_MAX)
    assert not in_range(0) and not in_range(SQLITE_MAX + 1) and not in_range(True)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), -1.0, 101])
def test_real_numbers_must_be_finite_and_in_range(value: float) -> None:
    with pytest.raises(OutOfRange):
        real(value, "days", 0, 100)
    assert real(2, "days", 0, 100) == 2.0


def test_argparse_types_say_what_is_accepted() -> None:
    assert whole_arg(0, 65535)("80") == 80
    with pytest.raises(argparse.ArgumentTypeError, match="^must be a whole number from 0 to 65535$"):
        whole_arg(0, 65535)("9" * 5000)  # more digits than Python converts
    with pytest.raises(argparse.ArgumentTypeError, match="^must be a number from 0 to 36500, not infinity$"):
        real_arg(0, 36500)("1e400")
