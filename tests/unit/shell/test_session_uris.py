"""A memory's URI is the same whether it is joined as a string (the fast path a start uses for tens of
thousands of files) or made from its path: for any name, under any root."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kin_memory.lsp.session import Session, path_to_uri

NAME = st.text(alphabet="abcXYZ019_.~-é %#?/ ", min_size=1, max_size=24)


@pytest.mark.parametrize("root_name", ["plain", "with space", "ünï", "a%b#c"])
@settings(max_examples=150, deadline=None)
@given(rel=NAME)
def test_a_uri_joined_as_a_string_is_the_one_made_from_the_path(
    tmp_path_factory, root_name: str, rel: str
) -> None:
    root = tmp_path_factory.getbasetemp() / root_name
    root.mkdir(exist_ok=True)
    session = Session(str(root))
    vpath = "/memories/" + rel
    assert session.uri_of(vpath) == path_to_uri(session.path_of(vpath))


def test_a_plain_name_takes_the_fast_path_and_a_quoted_one_does_not(tmp_path: Path) -> None:
    session = Session(str(tmp_path))
    assert session._plain_uri("/memories/facts/db-host_2.md") == path_to_uri(
        tmp_path / "facts" / "db-host_2.md"
    )
    for odd in (
        "/memories/a b.md",
        "/memories/é.md",
        "/memories/x/./y.md",
        "/memories/x/../y.md",
        "/elsewhere",
    ):
        assert session._plain_uri(odd) is None
