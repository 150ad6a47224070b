"""`kin.memory.stats` over a real store: every status counted once (quiet wins), what expires within a
week soonest first, quiet memories by repository, duplicate and contradiction groups, and the prompt
block's numbers equal to the index preview's."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kin_memory import protocol
from kin_memory.recall.results import index_preview_result
from kin_memory.stats import store_stats
from kin_memory.store.context import Context
from kin_memory.store.prompt_block import compose
from kin_memory.store.root import RootChoice
from kin_memory.store.store import load_store

DAY = 86400
NOW = time.time()
DEPLOY = (
    "# Deploy\n\nWe deploy the billing service with blue-green releases every Friday afternoon, after the "
    "release checklist is signed off by the on-call engineer and the change log is published.\n"
)


def write(
    root: Path, rel: str, category: str, body: str, ws: str | None = "global", age_days: float = 0
) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = f"workspace: {ws}\n" if ws else ""
    path.write_text(f"---\ncategory: {category}\n{stamp}---\n{body}", encoding="utf-8")
    when = NOW - age_days * DAY
    os.utime(path, (when, when))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    repo = tmp_path / "repo"
    repo.mkdir()
    gone = str(tmp_path / "moved-away")
    write(root, "facts/ok.md", "project-fact", "# Ok\n\nThe api listens on port 8080.\n", str(repo))
    write(root, "facts/stale.md", "project-fact", "# Old\n\nThe api listens on port 9090.\n", age_days=200)
    write(root, "facts/quiet-1.md", "project-fact", "# Q1\n\nquiet one\n", gone)
    write(root, "facts/quiet-2.md", "project-fact", "# Q2\n\nquiet two\n", gone, age_days=300)  # quiet wins
    write(root, "facts/dup-1.md", "project-fact", DEPLOY)
    write(root, "facts/dup-2.md", "project-fact", DEPLOY.replace("Friday afternoon", "Friday"))
    write(root, "prefs/tone.md", "preference", "# Tone\n\nterse\n", None)
    write(root, "episodes/fresh.md", "episodic", "# Fresh\n\nok\n", age_days=1)
    write(root, "episodes/soon-5.md", "episodic", "# Soon\n\nfive days left\n", age_days=37)
    write(root, "episodes/soon-2.md", "episodic", "# Soon\n\ntwo days left\n", age_days=40)
    write(root, "episodes/later.md", "episodic", "# Later\n\neight days left\n", age_days=34)
    write(root, "episodes/expired.md", "episodic", "# Gone\n\nexpired\n", age_days=50)
    write(root, "episodes/quiet.md", "episodic", "# Q\n\nquiet, expiring\n", gone, age_days=39)
    write(root, "sessions/new.md", "session", "# S\n\nscratch\n", None, age_days=0.01)
    write(root, "sessions/warn.md", "session", "# S\n\nscratch\n", None, age_days=3 / 24)
    write(root, "sessions/old.md", "session", "# S\n\nscratch\n", None, age_days=2)
    (root / "MEMORY.md").write_text("# Index\n\n- facts/ok.md: the api port\n")
    return root


def stats(root: Path, active: tuple[str, ...] = ()) -> protocol.StatsResult:
    return store_stats(
        load_store(root), Context(root=root, active=active, now=NOW), root=RootChoice(root, "argument"),
        memory_enabled=True, index=protocol.IndexState(state="ready", memories=3), review_queue=2,
        uri_of=lambda p: "file://" + p,
    )  # fmt: skip


def counts(result: protocol.StatsResult) -> dict[str, tuple[int, ...]]:
    return {
        k: (c.total, c.ok, c.stale, c.expiring, c.expired, c.quiet) for k, c in result.by_category.items()
    }


def test_every_memory_counts_once_in_exactly_one_status(store: Path) -> None:
    assert counts(stats(store)) == {
        #               total ok stale expiring expired quiet
        "project-fact": (6, 3, 1, 0, 0, 2),
        "preference": (1, 1, 0, 0, 0, 0),
        "episodic": (6, 2, 0, 2, 1, 1),
        "session": (3, 1, 0, 1, 1, 0),
    }


def test_every_category_is_a_key_even_on_an_empty_store(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    result = stats(tmp_path / "memory")
    assert list(result.by_category) == ["project-fact", "preference", "episodic", "session"]
    assert all(c == protocol.CategoryCounts() for c in result.by_category.values())
    assert result.expiring_soon == [] and result.groups == [] and result.quiet_by_repository == []


def test_expiring_soon_is_the_next_seven_days_soonest_first(store: Path) -> None:
    soon = stats(store).expiring_soon
    assert [(e.path, e.days) for e in soon] == [
        ("/memories/sessions/warn.md", 1),  # 21 hours left: rounds to a day
        ("/memories/sessions/new.md", 1),
        ("/memories/episodes/soon-2.md", 2),
        ("/memories/episodes/quiet.md", 3),  # quiet, and swept all the same
        ("/memories/episodes/soon-5.md", 5),
    ]
    assert soon[2].expires == time.strftime("%Y-%m-%d", time.gmtime(NOW + 2 * DAY))
    assert soon[2].uri == "file:///memories/episodes/soon-2.md" and soon[2].category == "episodic"


def test_quiet_memories_are_grouped_by_their_missing_repository(store: Path, tmp_path: Path) -> None:
    [group] = stats(store).quiet_by_repository
    assert group.workspace == str(tmp_path / "moved-away")
    assert group.paths == [
        "/memories/episodes/quiet.md",
        "/memories/facts/quiet-1.md",
        "/memories/facts/quiet-2.md",
    ]
    assert group.uris == ["file://" + p for p in group.paths]


def test_groups_are_the_duplicates_and_contradictions_of_the_candidates(store: Path) -> None:
    found = {(g.kind, tuple(g.paths)) for g in stats(store).groups}
    assert found == {
        ("duplicate", ("/memories/facts/dup-1.md", "/memories/facts/dup-2.md")),
        ("contradiction", ("/memories/facts/ok.md", "/memories/facts/stale.md")),
    }  # the stale fact is a candidate too, but not a group


def test_groups_follow_the_active_workspace(store: Path, tmp_path: Path) -> None:
    other = stats(store, ("/elsewhere",))
    assert {g.kind for g in other.groups} == {"duplicate"}  # ok.md is stamped to the repo: not visible here
    assert other.workspaces == ["/elsewhere"]
    assert counts(other) == counts(stats(store))  # counts are the whole store's


@pytest.mark.parametrize("active", [(), ("/elsewhere",)])
def test_prompt_block_numbers_are_the_index_previews(store: Path, active: tuple[str, ...]) -> None:
    s = load_store(store)
    preview = index_preview_result(compose(list(s.memories()), s.index_file(), active))
    block = stats(store, active).prompt_block
    assert (block.lines, block.bytes, block.truncated) == (preview.lines, preview.bytes, preview.truncated)
    assert (block.max_lines, block.max_bytes) == (200, 25600) and block.lines > 10


def test_a_prompt_block_over_the_cap_is_reported_truncated(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    for n in range(230):
        write(root, f"facts/f{n:03}.md", "project-fact", f"# Fact {n}\n\nfact\n")
    block = stats(root).prompt_block
    assert block.truncated and block.lines == 200


def test_the_wire_form_is_camel_case_with_the_info_fields(store: Path) -> None:
    wire = protocol.dump(stats(store))
    assert set(wire) == {
        "byCategory", "expiringSoon", "quietByRepository", "groups", "promptBlock", "reviewQueue",
        "indexState", "memoryEnabled", "root", "rootSource", "workspaces",
    }  # fmt: skip
    assert wire["promptBlock"]["maxLines"] == 200 and wire["reviewQueue"] == 2
    assert wire["byCategory"]["project-fact"]["quiet"] == 2 and wire["rootSource"] == "argument"


def test_the_cli_reads_the_index_without_touching_it(tmp_path: Path) -> None:
    """`peek_count` is read-only: no index is no count, a foreign schema is left as it is."""
    import sqlite3

    from kin_memory.recall.index import RecallIndex
    from kin_memory.recall.peek import peek_count

    root = tmp_path / "memory"
    write(root, "facts/a.md", "project-fact", "# A\n\nalpha\n")
    assert peek_count(root) is None and not (root / ".kin-index").exists()
    index = RecallIndex(root)
    index.count()  # creates the database
    index.close()
    assert peek_count(root) == 0
    conn = sqlite3.connect(index.path)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    before = index.path.read_bytes()
    assert peek_count(root) is None and index.path.read_bytes() == before


def test_groups_are_reused_until_a_memory_changes(store: Path) -> None:
    from kin_memory.stats import GroupsMemo

    s = load_store(store)
    memo = GroupsMemo()
    ctx = Context(root=store, now=NOW)
    first = memo.groups(s, ctx, str)
    assert memo.groups(s, ctx, str) is first  # nothing changed: the same answer, not computed again
    write(store, "facts/dup-3.md", "project-fact", DEPLOY.replace("afternoon", "morning"))
    s.refresh_path(store / "facts" / "dup-3.md")
    again = memo.groups(s, ctx, str)
    assert again is not first
    [dup] = [g for g in again if g.kind == "duplicate"]
    assert "/memories/facts/dup-3.md" in dup.paths
    assert memo.groups(s, Context(root=store, active=("/elsewhere",), now=NOW), str) is not again
