"""The markdown sink: fed the hostile corpus, what it returns renders as exactly the text it was given
(controls shown escaped), with no link, autolink, image, HTML, emphasis, block or broken-out code span.

The checks read the output as CommonMark does: a backslash before ASCII punctuation is that character,
an entity reference is its character, everything else is itself. What must never appear as itself is any
character that starts markdown or HTML syntax inside a line.
"""

from __future__ import annotations

import re
import string

import pytest
from corpus import ALL, ORDINARY, dangerous, visible
from hypothesis import given
from hypothesis import strategies as st

from kin_memory.sinks import markdown

ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#58;": ":"}
ACTIVE = set('\\`*_[]()<>!#|~{}$@^&:"')  # may never stand for itself in inline output
BLOCK_OPENERS = re.compile(r"^\s*(?:[-+=*>#]|\d+[.)]|```|~~~)")


def read_inline(out: str) -> tuple[str, str]:
    """(the text CommonMark shows, the characters that stood for themselves)."""
    shown, raw = [], []
    i = 0
    while i < len(out):
        if out[i] == "\\" and i + 1 < len(out) and out[i + 1] in string.punctuation:
            shown.append(out[i + 1])
            i += 2
            continue
        entity = next((e for e in ENTITIES if out.startswith(e, i)), None)
        if entity:
            shown.append(ENTITIES[entity])
            i += len(entity)
            continue
        shown.append(out[i])
        raw.append(out[i])
        i += 1
    return "".join(shown), "".join(raw)


def assert_inert_inline(text: str, out: str) -> None:
    shown, raw = read_inline(out)
    assert shown == visible(text), (text, out)  # nothing lost, nothing added
    assert not set(raw) & ACTIVE, (text, out)
    assert "\n" not in out and not [ch for ch in out if dangerous(ch)], out
    assert not BLOCK_OPENERS.match(out), out  # placed at a line start it opens no block
    assert not re.search(r"(?i)www\.", out), out  # GFM autolinks a bare www. name
    assert not re.search(r"(?i)(https?|ftp|mailto|command|javascript):", out), out


def code_span_parts(out: str) -> tuple[str, str]:
    fence = re.match(r"`+", out)
    assert fence, out
    n = len(fence.group())
    assert out.endswith(fence.group()) and len(out) > 2 * n, out
    inner = out[n:-n]
    return fence.group(), inner


def assert_inert_code_span(text: str, out: str) -> None:
    fence, inner = code_span_parts(out)
    # closed only by a backtick run of the fence's exact length: none inside
    assert all(len(run) != len(fence) for run in re.findall(r"`+", inner)), out
    # what CommonMark shows: one space stripped from each side when both sides have one (and it is not
    # all spaces); a backtick never touches the fence
    stripped = len(inner) >= 2 and inner[0] == inner[-1] == " "
    shown = inner[1:-1] if stripped else inner
    assert not inner.startswith("`") and not inner.endswith("`"), out
    assert shown == visible(text), (text, out)
    assert "\n" not in out and not [ch for ch in out if dangerous(ch)], out


@pytest.mark.parametrize("name", sorted(ALL))
def test_markdown_inline_renders_the_corpus_inert(name: str) -> None:
    assert_inert_inline(ALL[name], markdown.inline(ALL[name]))


@pytest.mark.parametrize("name", sorted(ALL))
def test_markdown_code_span_cannot_be_left(name: str) -> None:
    assert_inert_code_span(ALL[name], markdown.code_span(ALL[name]))


@pytest.mark.parametrize("text", ORDINARY)
def test_markdown_shows_ordinary_text_as_is(text: str) -> None:
    assert read_inline(markdown.inline(text))[0] == text
    assert code_span_parts(markdown.code_span(text))[1] == text  # no padding where none is needed


def test_markdown_limits_cut_before_escaping() -> None:
    out = markdown.inline("[" * 50, limit=10)
    assert read_inline(out)[0] == "[" * 9 + "…"
    span = markdown.code_span("`" * 50, limit=10)
    assert code_span_parts(span)[1] == " " + "`" * 9 + "… "


@given(st.text())
def test_markdown_inline_is_inert_for_any_text(text: str) -> None:
    assert_inert_inline(text, markdown.inline(text))


@given(st.text())
def test_markdown_code_span_is_closed_only_by_its_fence(text: str) -> None:
    assert_inert_code_span(text, markdown.code_span(text))
