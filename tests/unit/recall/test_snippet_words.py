"""Snippets are cut between words: every word a snippet shows is a whole word of the memory, in every
door that shows one (hover, search, workspace symbols, the CLI all call `snippet`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kin_memory.recall.snippet import snippet

WORDS = ("cluster", "runs", "on", "three", "nodes", "in", "eu-west", "replication", "ledger", "a", "I")


@given(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=400),
    st.sampled_from(WORDS),
    st.sampled_from((40, 80, 160)),
)
@settings(max_examples=200, deadline=None)
def test_a_snippet_shows_only_whole_words_and_fits_its_width(words, query, width) -> None:
    body = " ".join(words)
    out = snippet(body, query, width)
    assert len(out) <= width, out
    shown = out.strip("…").split()
    assert shown and all(w in WORDS for w in shown), out


def test_the_reported_cuts_are_gone() -> None:
    body = (
        "The search cluster for the payment service that everyone uses in production runs on three "
        "nodes, and the cache I runs on four nodes in the second region, replicated nightly."
    )
    whole = {w.strip(",.") for w in body.split()}
    for query in ("nodes", "region", "replicated"):
        out = snippet(body, query, 60)
        assert all(w.strip(",.") in whole for w in out.strip("…").split()), out
