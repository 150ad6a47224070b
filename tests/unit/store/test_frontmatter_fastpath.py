"""The hand-read `key: value` fast path must agree with the full YAML path on every input it accepts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kin_memory.store import frontmatter as fm

KEYS = st.sampled_from(["category", "workspace", "title", "tags", "a-b", "_x", "Key9"])
# Values mixing plain words with everything YAML treats specially.
PIECE = st.sampled_from(
    list("abcXYZ019 /~_.-:#'\"[]{},&*!|>%@`\t?=+")
    + ["yes", "null", "1e3", "2024-01-02", "0x1f", "On", ".inf", "0o17", "1_000"]
)
VALUE = st.lists(PIECE, max_size=6).map(lambda parts: "".join(parts).strip(" "))


def both(text: str) -> tuple[fm.Frontmatter, fm.Frontmatter]:
    lines = fm.split_lines(text)
    fast = fm.parse_frontmatter(text, lines)
    original = fm._simple_entries
    fm._simple_entries = lambda _lines, _close: None  # force the YAML path
    try:
        slow = fm.parse_frontmatter(text, lines)
    finally:
        fm._simple_entries = original
    return fast, slow


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(KEYS, st.sampled_from([" ", "  "]), VALUE), min_size=1, max_size=4))
def test_fast_path_matches_yaml(pairs: list[tuple[str, str, str]]) -> None:
    text = "---\n" + "".join(f"{k}:{sep}{v}\n" for k, sep, v in pairs) + "---\nbody\n"
    fast, slow = both(text)
    assert fast == slow


def test_fast_path_taken_for_plain_lines() -> None:
    lines = fm.split_lines("---\ncategory: project-fact\nworkspace: /home/u/proj\n---\n")
    entries = fm._simple_entries(lines, 3)
    assert entries is not None and [e.value for e in entries] == ["project-fact", "/home/u/proj"]
    assert entries[1].value_span == fm.Span(2, 11, 2, 23)


def test_fast_path_declines_typed_and_odd_values() -> None:
    odd = ("'it''s'", '"a\\tb"', "[x, [y]]", "[x,]", "[x] # c", "'tab\there'", "[a: b]", "{a: b}")
    for value in ("true", "12", "null", "2024-05-01", "a # comment", "a: b", *odd):
        lines = fm.split_lines(f"---\ncategory: {value}\n---\n")
        assert fm._simple_entries(lines, 2) is None, value


def test_fast_path_takes_word_lists_and_plain_quoted_strings() -> None:
    lines = fm.split_lines("---\ntags: [a, b-c, d_e]\ncategory: 'preference'\ntitle: \"x: #y\"\n---\n")
    entries = fm._simple_entries(lines, 4)
    assert entries is not None
    assert [(e.value, e.raw, e.is_string) for e in entries] == [
        ("list", "", False),
        ("preference", "'preference'", True),
        ("x: #y", '"x: #y"', True),
    ]


# Lists and quoted strings built from the same pieces: mostly valid forms, some of them odd.
WORD = st.sampled_from(["a", "b-c", "x.y/z", "yes", "_q", "null", "A1", "1a", "-a", "a:"])
ITEM = st.one_of(WORD, st.lists(PIECE, min_size=0, max_size=3).map("".join))
LIST = st.tuples(
    st.lists(ITEM, max_size=4), st.sampled_from([", ", ",", " , "]), st.sampled_from(["", " "])
).map(lambda t: "[" + t[2] + t[1].join(t[0]) + t[2] + "]")
QUOTED = st.tuples(st.sampled_from(["'", '"']), ITEM).map(lambda t: t[0] + t[1] + t[0])


@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.tuples(KEYS, st.sampled_from([" ", "  "]), st.one_of(LIST, QUOTED, VALUE)), min_size=1, max_size=4
    )
)
def test_fast_path_matches_yaml_for_lists_and_quoted_strings(pairs: list[tuple[str, str, str]]) -> None:
    text = "---\n" + "".join(f"{k}:{sep}{v}\n" for k, sep, v in pairs) + "---\nbody\n"
    fast, slow = both(text)
    assert fast == slow


def test_a_frontmatter_too_large_for_yaml_is_too_large_on_the_fast_path_too() -> None:
    for line in (
        "note: '" + "q" * 300_000 + "'",
        "note: " + "q" * 300_000,
        "tags: [" + "q, " * 90_000 + "q]",
    ):
        fast, slow = both(f"---\ncategory: preference\n{line}\n---\nx\n")
        assert fast == slow and fast.status == "yaml_error" and "too large" in (fast.error or "")
