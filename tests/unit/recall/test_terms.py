"""Query words to terms, without an index: stop words, stems, shorthand, the one-typo fix and its cost."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kin_memory.recall.query import Phrase, phrases
from kin_memory.recall.terms import Lexicon, content_text, content_words, with_multiword
from kin_memory.recall.words import SHORTHAND, STOP_WORDS, stem


@pytest.mark.parametrize(
    "forms",
    [
        ("experiment", "experiments"),
        ("revert", "reverted", "reverts", "reverting"),
        ("run", "runs", "running"),
        ("retry", "retries", "retried", "retrying"),
        ("schedule", "scheduled", "scheduling"),
        ("connect", "connection", "connections", "connected"),
        ("deploy", "deploys", "deployed", "deployment", "deployments"),
        ("batch", "batches"),
        ("process", "processes", "processing"),
        ("name", "names", "named", "naming"),
    ],
)
def test_forms_of_a_word_share_a_stem(forms: tuple[str, ...]) -> None:
    assert len({stem(f) for f in forms}) == 1, {f: stem(f) for f in forms}


@pytest.mark.parametrize(
    "apart", [("string", "str"), ("status", "stat"), ("k8s", "k8"), ("comment", "com"), ("pass", "pa")]
)
def test_words_that_are_not_forms_of_each_other_stay_apart(apart: tuple[str, str]) -> None:
    assert stem(apart[0]) != stem(apart[1])


def test_shorthand_goes_both_ways_and_keeps_its_narrow_readings_one_way() -> None:
    assert "database" in SHORTHAND["db"] and "db" in SHORTHAND["database"]
    assert "postgres" in SHORTHAND["db"] and "db" not in SHORTHAND.get("postgres", ())
    assert "pull request" in SHORTHAND["pr"] and "pr" in SHORTHAND["pull request"]
    assert "kubernetes" in SHORTHAND["k8s"] and "production" in SHORTHAND["prod"]


def test_content_words_drop_the_conversation_but_never_everything() -> None:
    words = [p.text for p in content_words(phrases("can you remind me which port pgbouncer listens on?"))]
    assert words == ["port", "pgbouncer", "listens"]
    assert [p.text for p in content_words(phrases("where"))] == ["where"]
    assert {"how", "do", "i", "you", "what", "where", "which", "can", "remind", "me"} <= STOP_WORDS
    # the word being typed is never dropped: it may become anything
    assert [p.text for p in content_words(phrases("where", prefix_last=True))] == ["where"]
    assert content_text("how do I reach the bastion?") == "reach bastion"


def test_multiword_shorthand_becomes_one_term() -> None:
    items = with_multiword(phrases("who approves a pull request here"), "who approves a pull request here")
    assert [p.text for p in content_words(items)] == ["approves", "pull request"]
    items = with_multiword(phrases("heap out of memory"), "heap out of memory")
    assert "out of memory" in [p.text for p in items]


class NoScan(list[str]):
    """A vocabulary that fails the test if it is read: the typo fix must only look words up."""

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the vocabulary was scanned")

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        raise AssertionError("the vocabulary was scanned")

    def __len__(self) -> int:
        raise AssertionError("the vocabulary was scanned")


def lexicon(df: dict[str, int]) -> Lexicon:
    return Lexicon(dict(df), sorted(df), lambda _t: 0)


def test_the_typo_fix_looks_words_up_without_reading_the_vocabulary() -> None:
    lex = Lexicon({"postgres": 5, "postgis": 2, "storybook": 3}, NoScan(), lambda _t: 0)
    assert lex.typo_fix("postgress") == "postgres"  # a letter too many
    assert lex.typo_fix("storybok") == "storybook"  # a letter missing
    assert lex.typo_fix("psotgres") == "postgres"  # two letters swapped
    assert lex.typo_fix("postgrex") == "postgres"  # a letter changed


def test_the_typo_fix_is_only_for_longer_words_and_common_fixes() -> None:
    lex = lexicon({"stripe": 4, "zanzibar": 1, "cats": 9, "deploy": 3, "deplot": 3})
    assert lex.typo_fix("stirpe") == "stripe"
    assert lex.typo_fix("zanzibra") is None  # one memory's word: maybe itself the typo
    assert lex.typo_fix("catz") is None  # four letters: too many neighbours to guess
    assert lex.typo_fix("stripe-ish") is None  # not a plain word
    assert lex.typo_fix("depjoy") == "deploy"


def test_terms_hold_the_word_its_forms_its_shorthand_and_a_typo_fix() -> None:
    lex = lexicon(
        {"database": 3, "databases": 1, "postgres": 4, "experiment": 2, "experiments": 1, "kubectl": 2}
    )
    [db] = lex.terms([Phrase("db")])
    assert [a.text for a in db.alts] == ["db", "database", "databases", "postgres"]
    [exp] = lex.terms([Phrase("experiment")])
    assert [a.text for a in exp.alts] == ["experiment", "experiments"] and exp.df == 3
    [typo] = lex.terms([Phrase("postgress")])
    assert typo.word == "postgres"
    [unknown] = lex.terms([Phrase("kumquat")])
    assert unknown.df == 0 and [a.text for a in unknown.alts] == ["kumquat"]
    # shorthand only for queries, and only what the store holds
    [k8s] = lex.terms([Phrase("k8s")])
    assert [a.text for a in k8s.alts] == ["k8s", "kubectl"]
    [plain] = lex.terms([Phrase("db")], shorthand=False)
    assert [a.text for a in plain.alts] == ["db"]
