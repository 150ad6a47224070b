"""The terminal sink: fed the hostile corpus, nothing a terminal acts on gets through."""

from __future__ import annotations

import json

import pytest
from corpus import ALL, ORDINARY, dangerous, visible
from hypothesis import given
from hypothesis import strategies as st

from kin_memory.sinks import terminal


@pytest.mark.parametrize("name", sorted(ALL))
def test_terminal_field_is_one_inert_line(name: str) -> None:
    out = terminal.field(ALL[name])
    assert not [ch for ch in out if dangerous(ch)], repr(out)
    assert out == visible(ALL[name])  # escaped where it was, nothing lost
    out.encode("utf-8")  # printable on a UTF-8 terminal (lone surrogates raised before)


@pytest.mark.parametrize("name", sorted(ALL))
def test_terminal_block_keeps_only_its_own_lines_and_tabs(name: str) -> None:
    text = ALL[name]
    out = terminal.block(text)
    assert not [ch for ch in out if dangerous(ch) and ch not in "\n\t"], repr(out)
    assert out.count("\n") == text.count("\n")
    assert "\r" not in out and "\x1b" not in out


@pytest.mark.parametrize("name", sorted(ALL))
def test_terminal_json_text_is_the_same_data_and_inert(name: str) -> None:
    data = {"path": ALL[name], "items": [ALL[name], 1]}
    for indent in (None, 2):
        out = terminal.json_text(json.dumps(data, ensure_ascii=False, indent=indent))
        assert json.loads(out) == data
        assert not [ch for ch in out if dangerous(ch) and ch != "\n"], repr(out)


@pytest.mark.parametrize("text", ORDINARY)
def test_terminal_leaves_ordinary_text_alone(text: str) -> None:
    assert terminal.field(text) == text and terminal.block(text) == text


def test_terminal_field_takes_paths() -> None:
    from pathlib import Path

    assert terminal.field(Path("/tmp/a\x1b[2K.md")) == "/tmp/a\\x1b[2K.md"


@given(st.text())
def test_terminal_field_never_lets_a_dangerous_character_through(text: str) -> None:
    out = terminal.field(text)
    assert not any(dangerous(ch) for ch in out)
    assert len(out.splitlines()) <= 1


def test_no_character_to_escape_is_printable() -> None:
    """nothing_to_escape answers a printable text without its pattern: that holds only while Python calls
    no hostile character printable, for every code point (a new Unicode version could move one)."""
    from kin_memory.sinks.controls import HOSTILE, nothing_to_escape

    printable_hostile = [hex(c) for c in range(0x110000) if chr(c).isprintable() and HOSTILE.match(chr(c))]
    assert printable_hostile == []
    assert nothing_to_escape("a plain line: KM303 information") and not nothing_to_escape("a\x1b[2Kline")
    assert not nothing_to_escape("left\u202eright") and nothing_to_escape("caf\u00e9 \u200d emoji joiner")
