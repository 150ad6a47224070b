"""The labeled recall set is consistent, its kind tags are backed by the words, and the metrics compute
what they claim (checked against small hand-computed examples)."""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from recall_eval.dataset import (  # noqa: E402
    GLOBAL,
    KINDS,
    NO_ANSWER,
    SLICES,
    TUNING_SLICES,
    Case,
    LabeledSet,
    load,
    load_memories,
    materialize,
)
from recall_eval.diagnose import SHORTHAND, content_words, one_edit_apart, stem  # noqa: E402
from recall_eval.metrics import CaseScore, mrr_at, ndcg_at, recall_at, summarize  # noqa: E402
from recall_eval.systems import WordCount, id_of_vpath, words  # noqa: E402

REPOS = "/srv/repos/"


@pytest.fixture(scope="module")
def labeled() -> LabeledSet:
    return load(slices=SLICES)  # every check covers every slice, the held-out one included


def answers(case: Case) -> list[str]:
    return [m for m, g in case.relevant.items() if g == 2]


# -- ids and size ----------------------------------------------------------------------------------


def test_ids_are_unique() -> None:
    ids = [m.id for m in load_memories()]
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    labeled = load(slices=SLICES)
    case_ids = [c.id for c in labeled.turns + labeled.hover]
    assert [i for i, n in Counter(case_ids).items() if n > 1] == []


def test_size_and_spread(labeled: LabeledSet) -> None:
    memories = list(labeled.memories.values())
    assert len(memories) >= 150
    assert sum(1 for t in labeled.turns if t.answerable) >= 60
    assert sum(1 for h in labeled.hover if h.answerable) >= 20
    repos = {m.workspace for m in memories if m.workspace and m.workspace.startswith(REPOS)}
    turn_repos = {t.workspace for t in labeled.turns if t.workspace in repos}
    assert len(turn_repos) >= 3  # at least three repositories that turns are asked in
    assert {m.effective_category for m in memories} == {"project-fact", "preference", "episodic", "session"}
    # Global memories of every flavour: preferences without a stamp, legacy facts without a workspace
    # key, legacy files without frontmatter, explicit `workspace: global`.
    assert any(m.category == "preference" and m.workspace is None for m in memories)
    assert any(m.category == "project-fact" and m.workspace is None for m in memories)
    assert any(m.category is None for m in memories)
    assert any(m.workspace == GLOBAL for m in memories)
    # Memories no turn can see: a moved repository's stamp and a custom label.
    turn_workspaces = {t.workspace for t in labeled.turns}
    assert any(m.workspace and m.workspace not in turn_workspaces | {GLOBAL} for m in memories)


# -- slices -----------------------------------------------------------------------------------------


def test_every_slice_is_loaded_tagged_and_large_enough(labeled: LabeledSet) -> None:
    per_slice = Counter(t.slice for t in labeled.turns)
    assert set(per_slice) == set(SLICES), per_slice
    answerable = Counter(t.slice for t in labeled.turns if t.answerable)
    assert answerable["paraphrase"] >= 40
    assert per_slice["heldout"] >= 30
    # Held-out turns are scored once at the end: a plain load() (what tuning runs use) leaves them out.
    default = load()
    assert {t.slice for t in default.turns} == set(TUNING_SLICES)
    assert len(default.turns) == len(labeled.turns) - per_slice["heldout"]
    with pytest.raises(ValueError, match="unknown slices"):
        load(slices=("main", "held-out"))


def test_paraphrase_slice_asks_in_other_words_everywhere(labeled: LabeledSet) -> None:
    turns = [t for t in labeled.turns if t.slice == "paraphrase"]
    for case in turns:
        assert ("paraphrase" in case.kinds) == case.answerable, case.id
    workspaces = {t.workspace for t in labeled.turns if t.slice == "main"}
    assert {t.workspace for t in turns if t.answerable} == workspaces  # every workspace is asked
    assert sum(1 for t in turns if NO_ANSWER in t.kinds) >= 6
    assert sum(1 for t in turns if t.traps) >= 4


def test_heldout_slice_mixes_the_kinds_of_the_set(labeled: LabeledSet) -> None:
    counts = Counter(k for t in labeled.turns if t.slice == "heldout" for k in t.kinds)
    wanted = {"keyword": 5, "paraphrase": 6, "shorthand": 3, "variant": 3, "trap": 3, "preference": 2}
    wanted |= {"filler": 4, "typo": 1, NO_ANSWER: 2}
    short = {k: (counts[k], n) for k, n in wanted.items() if counts[k] < n}
    assert short == {}, f"held-out kinds under their minimum (have, want): {short}"


# -- labels -----------------------------------------------------------------------------------------


def test_labels_point_at_recallable_memories(labeled: LabeledSet) -> None:
    for case in labeled.turns + labeled.hover:
        for mid, grade in case.relevant.items():
            memory = labeled.memories.get(mid)
            assert memory is not None, f"{case.id}: unknown memory {mid}"
            assert grade in (1, 2), f"{case.id}: grade {grade} for {mid}"
            assert memory.indexed, f"{case.id}: {mid} is a session memory (never indexed)"
            assert memory.visible_in(case.workspace), f"{case.id}: {mid} is not visible in {case.workspace}"
            assert mid != case.memory, f"{case.id}: the hovered memory labels itself"


def test_answerable_cases_have_an_answer_and_fit_in_the_top_five(labeled: LabeledSet) -> None:
    for case in labeled.turns + labeled.hover:
        assert (NO_ANSWER in case.kinds) == (not case.relevant), case.id
        if case.relevant:
            assert len(case.relevant) <= 5, f"{case.id}: a perfect top 5 must exist"
        if case in labeled.turns and case.relevant:
            assert answers(case), f"{case.id}: a turn needs a grade-2 answer"


def test_every_turn_is_tagged_with_known_kinds(labeled: LabeledSet) -> None:
    for case in labeled.turns:
        assert case.kinds, case.id
        assert set(case.kinds) <= set(KINDS), f"{case.id}: {set(case.kinds) - set(KINDS)}"
    counts = Counter(k for t in labeled.turns for k in t.kinds)
    wanted = {
        "trap": 10,
        "preference": 8,
        "paraphrase": 3,
        "shorthand": 8,
        "typo": 3,
        "variant": 8,
        "filler": 15,
        "session": 1,
        "no-answer": 3,
    }
    short = {k: (counts[k], n) for k, n in wanted.items() if counts[k] < n}
    assert short == {}, f"kinds under their minimum (have, want): {short}"


def test_traps_are_look_alikes_the_turn_must_not_see(labeled: LabeledSet) -> None:
    for case in labeled.turns:
        assert ("trap" in case.kinds) == bool(case.traps), case.id
        for mid in case.traps:
            memory = labeled.memories.get(mid)
            assert memory is not None, f"{case.id}: unknown trap {mid}"
            assert memory.indexed and not memory.visible_in(case.workspace), f"{case.id}: {mid}"


def test_preference_turns_are_answered_by_a_preference(labeled: LabeledSet) -> None:
    for case in labeled.turns:
        if "preference" in case.kinds:
            categories = {labeled.memories[m].effective_category for m in answers(case)}
            assert "preference" in categories, case.id


# -- the kind tags are backed by the words ------------------------------------------------------------


def _vocabulary(labeled: LabeledSet, workspace: str) -> set[str]:
    out: set[str] = set()
    for m in labeled.recallable(workspace):
        out |= words(m.content)
    return out


def test_paraphrases_share_no_content_word_with_the_answer(labeled: LabeledSet) -> None:
    for case in labeled.turns:
        if "paraphrase" in case.kinds:
            for mid in answers(case):
                shared = content_words(case.query) & words(labeled.memories[mid].content)
                assert not shared, f"{case.id}: shares {shared} with {mid}"


def test_typos_are_one_edit_from_a_word_of_the_answer(labeled: LabeledSet) -> None:
    for case in labeled.turns:
        if "typo" in case.kinds:
            vocabulary = _vocabulary(labeled, case.workspace)
            have = set().union(*(words(labeled.memories[m].content) for m in answers(case)))
            typos = [
                w
                for w in content_words(case.query)
                if w not in vocabulary and any(one_edit_apart(w, h) for h in have)
            ]
            assert typos, f"{case.id}: no misspelled word of the answer"


def test_shorthand_is_spelled_out_only_in_the_answer(labeled: LabeledSet) -> None:
    for case in labeled.turns:
        if "shorthand" in case.kinds:
            have = set().union(*(words(labeled.memories[m].content) for m in answers(case)))
            short = [w for w in words(case.query) if w in SHORTHAND and w not in have]
            assert short, f"{case.id}: no shorthand missing from the answer"
            assert any(s in have for w in short for s in SHORTHAND[w]), f"{case.id}: not spelled out"


def test_variants_have_another_form_in_the_answer(labeled: LabeledSet) -> None:
    for case in labeled.turns:
        if "variant" in case.kinds:
            have = set().union(*(words(labeled.memories[m].content) for m in answers(case)))
            forms = [w for w in content_words(case.query) - have if any(stem(h) == stem(w) for h in have)]
            assert forms, f"{case.id}: every content word appears verbatim in the answer"


def test_session_turns_match_a_session_memory(labeled: LabeledSet) -> None:
    sessions = [m for m in labeled.memories.values() if not m.indexed]
    for case in labeled.turns:
        if "session" in case.kinds:
            assert any(
                m.visible_in(case.workspace) and len(content_words(case.query) & words(m.content)) >= 2
                for m in sessions
            ), case.id


# -- hover positions and the materialized store -----------------------------------------------------


def test_hover_pointer_rests_in_the_body_on_the_paragraph(labeled: LabeledSet) -> None:
    for case in labeled.hover:
        assert case.memory is not None
        memory = labeled.memories[case.memory]
        lines = memory.render().split("\n")
        assert case.query in memory.render(), case.id
        assert lines[case.line][case.col :].strip(), case.id
        assert lines[case.line] in case.query.split("\n"), case.id
        assert memory.category is None or case.line > lines.index("---", 1), f"{case.id}: in frontmatter"


def test_materialized_store_reads_as_labeled(labeled: LabeledSet, tmp_path: Path) -> None:
    from kin_memory.store.memory import load as load_file
    from kin_memory.store.paths import virtual_of_rel

    now = time.time()
    materialize(labeled, tmp_path, now)
    files = sorted(tmp_path.rglob("*.md"))
    assert len(files) == len(labeled.memories)
    for memory in labeled.memories.values():
        path = tmp_path / memory.rel_path
        parsed = load_file(path, virtual_of_rel(memory.rel_path))
        assert id_of_vpath(parsed.vpath) == memory.id
        assert parsed.category == memory.effective_category, memory.id
        assert parsed.stamp == memory.workspace, memory.id
        assert parsed.title == memory.title, memory.id
        assert math.isclose(now - parsed.mtime, memory.age_days * 86400.0, abs_tol=2.0), memory.id


# -- metrics on hand-computed examples ----------------------------------------------------------------


def test_ndcg_by_hand() -> None:
    # DCG = 2/log2(2) + 0 + 1/log2(4) = 2.5; ideal = 2 + 1/log2(3) = 2.6309
    assert ndcg_at(["a", "b", "c"], {"a": 2, "c": 1}) == pytest.approx(2.5 / (2 + 1 / math.log2(3)))
    # The answer second: 2/log2(3) over 2.
    assert ndcg_at(["x", "a"], {"a": 2}) == pytest.approx(1 / math.log2(3))
    assert ndcg_at(["a", "c"], {"a": 2, "c": 1}) == pytest.approx(1.0)
    assert ndcg_at(["c", "a"], {"a": 2, "c": 1}) == pytest.approx(
        (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    )
    assert ndcg_at([], {"a": 2}) == 0.0
    assert ndcg_at(["x1", "x2", "x3", "x4", "x5", "a"], {"a": 2}) == 0.0  # past the cutoff
    with pytest.raises(ValueError):
        ndcg_at(["a"], {})


def test_mrr_by_hand() -> None:
    assert mrr_at(["a"], {"a": 2}) == 1.0
    assert mrr_at(["x", "y", "c"], {"a": 2, "c": 1}) == pytest.approx(1 / 3)  # any grade ≥ 1 counts
    assert mrr_at(["x1", "x2", "x3", "x4", "x5", "a"], {"a": 2}) == 0.0
    assert mrr_at([], {"a": 2}) == 0.0


def test_recall_by_hand() -> None:
    assert recall_at(["b", "z"], {"a": 2, "b": 1, "c": 1}) == pytest.approx(1 / 3)
    assert recall_at(["c", "a", "b"], {"a": 2, "b": 1, "c": 1}) == 1.0
    assert recall_at(["x1", "x2", "x3", "x4", "x5", "a"], {"a": 2}) == 0.0
    with pytest.raises(ValueError):
        recall_at(["a"], {})


def test_summary_means_over_answerable_cases_and_counts_noise() -> None:
    s = summarize(
        [CaseScore(1.0, 1.0, 1.0), CaseScore(0.5, 0.0, 0.5)], leaks=1, session=0, noise_counts=[5, 0]
    )
    assert (s.cases, s.ndcg, s.mrr, s.recall) == (2, 0.75, 0.5, 0.75)
    assert (s.leaks, s.session, s.noise_cases, s.noise_mean) == (1, 0, 2, 2.5)


def test_word_count_baseline_by_hand(labeled: LabeledSet) -> None:
    # Only visible memories are ranked; the answer shares the most query words.
    case = Case("t", "/srv/repos/ledger", "pgbouncer transaction pooling SHOW POOLS", ("keyword",), {})
    ranked = WordCount(labeled).search(case)
    assert ranked[0] == "ledger/pgbouncer"
    assert all(labeled.memories[r].visible_in(case.workspace) for r in ranked)
