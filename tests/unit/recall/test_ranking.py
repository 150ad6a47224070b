"""What recall answers a person's turn to the agent, on real SQLite FTS5 over real files: conversational
words dropped, word forms, shorthand and one-typo words matched, preferences only breaking near-ties,
and a relevance floor (fewer results rather than noise)."""

from __future__ import annotations

from pathlib import Path

from kin_memory.recall.service import Recall
from support.memfiles import memory, write

WS = "/srv/repos/app"


def paths(hits) -> list[str]:
    return [h.vpath if hasattr(h, "vpath") else h[0].vpath for h in hits]


def recall(root: Path) -> Recall:
    r = Recall(root)
    r.sync_disk()
    return r


def chatty_store(root: Path) -> None:
    """Memories full of the words people use to talk to an agent, and one about pgbouncer."""
    write(
        root,
        "facts/pgbouncer.md",
        memory(
            "project-fact", "# Connection pooling\n\nPgbouncer listens on 6432 in front of Postgres.\n", WS
        ),
    )
    write(
        root,
        "facts/onboarding.md",
        memory(
            "project-fact",
            "# Onboarding\n\nHow do I get started? You can ask me where the docs are; what do you need "
            "to know first? Remind me to show you how it all works.\n",
            WS,
        ),
    )
    write(
        root,
        "notes/standup.md",
        memory(
            "episodic", "# Standup\n\nWhich of you can tell me what we did and where we are with it?\n", WS
        ),
    )
    write(
        root,
        "prefs/answers.md",
        memory("preference", "# How I like answers\n\nWhen you answer me, tell me what you did and why.\n"),
    )


def test_a_conversational_turn_finds_the_memory_with_its_one_content_word(store: Path) -> None:
    chatty_store(store)
    r = recall(store)
    hits = paths(r.search("can you remind me where and how do I get to the pgbouncer?", (WS,)))
    assert hits == ["/memories/facts/pgbouncer.md"]  # the chatter matches nothing else at all


def test_an_unrelated_preference_never_ranks_first(store: Path) -> None:
    chatty_store(store)
    write(
        store, "facts/signing.md", memory("project-fact", "# Release signing\n\nRotate the key yearly.\n", WS)
    )
    r = recall(store)
    for turn in ("how do you want me to rotate the key?", "tell me what you did with the signing key"):
        hits = paths(r.search(turn, (WS,)))
        assert hits[0] == "/memories/facts/signing.md"
        assert "/memories/prefs/answers.md" not in hits  # it shares only conversational words
    # A turn whose content words no memory holds gets nothing, not the preference.
    assert r.search("can you tell me about kumquats?", (WS,)) == []


def test_a_turn_of_only_conversational_words_recalls_nothing(store: Path) -> None:
    chatty_store(store)
    r = recall(store)
    for turn in ("thanks, that worked!", "ok, now do the same", "let me know when you're done"):
        assert r.search(turn, (WS,)) == [], turn


def test_a_search_for_a_stop_word_alone_still_finds_it(store: Path) -> None:
    chatty_store(store)
    r = recall(store)
    # Nothing but stop words: kept, and the memory must hold every one of them.
    assert paths(r.search("where", (WS,)))[:1] in (
        ["/memories/facts/onboarding.md"],
        ["/memories/notes/standup.md"],
    )
    assert set(paths(r.search("where", (WS,)))) == {
        "/memories/facts/onboarding.md",
        "/memories/notes/standup.md",
    }
    assert paths(r.search("where do you", (WS,))) == ["/memories/facts/onboarding.md"]


def test_db_finds_a_postgres_memory(store: Path) -> None:
    write(
        store,
        "facts/primary.md",
        memory("project-fact", "# Primary\n\nPostgres 16 runs on the primary host; replicas follow.\n", WS),
    )
    write(
        store, "facts/frontend.md", memory("project-fact", "# Frontend\n\nThe app is built with Vite.\n", WS)
    )
    r = recall(store)
    assert paths(r.search("how do I connect to the db?", (WS,)))[:1] == ["/memories/facts/primary.md"]


def test_shorthand_matches_what_it_stands_for_both_ways(store: Path) -> None:
    write(
        store, "facts/k8s.md", memory("project-fact", "# Clusters\n\nWe run two Kubernetes clusters.\n", WS)
    )
    write(store, "facts/prs.md", memory("project-fact", "# Reviews\n\nEvery PR needs one approval.\n", WS))
    r = recall(store)
    assert paths(r.search("which k8s cluster?", (WS,)))[:1] == ["/memories/facts/k8s.md"]
    assert paths(r.search("kubernetes", (WS,)))[:1] == ["/memories/facts/k8s.md"]
    assert paths(r.search("who approves a pull request", (WS,)))[:1] == ["/memories/facts/prs.md"]


def test_a_one_typo_rare_word_still_matches(store: Path) -> None:
    for name in ("backups", "replicas"):
        write(
            store,
            f"facts/{name}.md",
            memory("project-fact", f"# {name.title()}\n\nPostgres {name} are kept for two weeks.\n", WS),
        )
    write(
        store,
        "facts/other.md",
        memory("project-fact", "# Other\n\nBackups of the wiki are kept forever.\n", WS),
    )
    r = recall(store)
    hits = paths(r.search("how long do we keep postgress backups?", (WS,)))
    assert hits[0] == "/memories/facts/backups.md"  # postgres (fixed) and backups both match
    assert "/memories/facts/replicas.md" in hits  # postgres alone still counts


def test_a_typo_is_fixed_only_to_a_word_of_several_memories(store: Path) -> None:
    write(store, "facts/one.md", memory("project-fact", "# One\n\nThe zanzibar service.\n", WS))
    r = recall(store)
    assert r.search("zanzibra", (WS,)) == []  # one memory's word might itself be the typo
    write(store, "facts/two.md", memory("project-fact", "# Two\n\nZanzibar again.\n", WS))
    r = recall(store)
    assert len(r.search("zanzibra", (WS,))) == 2
    assert r.search("zanzibar", (WS,)) != []  # a word that matches is never "fixed"


def test_stemming_matches_plurals_and_tenses(store: Path) -> None:
    write(
        store,
        "notes/revert.md",
        memory("episodic", "# Reverted the cache change\n\nIt broke logins, so it was reverted.\n", WS),
    )
    write(
        store,
        "facts/experiment.md",
        memory("project-fact", "# Experiment tracking\n\nEach experiment gets a run id.\n", WS),
    )
    write(
        store,
        "facts/deploy.md",
        memory("project-fact", "# Deployment\n\nDeployments go out on Tuesdays.\n", WS),
    )
    r = recall(store)
    assert paths(r.search("why did we revert the cache?", (WS,)))[:1] == ["/memories/notes/revert.md"]
    assert paths(r.search("show me the experiments", (WS,)))[:1] == ["/memories/facts/experiment.md"]
    assert paths(r.search("when do deploys happen", (WS,)))[:1] == ["/memories/facts/deploy.md"]
    assert paths(r.search("tracked", (WS,)))[:1] == ["/memories/facts/experiment.md"]


def test_a_preference_breaks_a_near_tie_only(store: Path) -> None:
    write(store, "prefs/tabs.md", memory("preference", "# Indentation\n\nUse tabs for indentation.\n"))
    write(store, "facts/tabs.md", memory("project-fact", "# Indentation\n\nUse tabs for indentation.\n", WS))
    write(
        store,
        "facts/go-style.md",
        memory(
            "project-fact", "# Go indentation\n\nGo indentation is tabs; gofmt enforces indentation.\n", WS
        ),
    )
    r = recall(store)
    hits = paths(r.search("tabs indentation", (WS,)))
    # the same words: the preference wins the tie
    assert hits.index("/memories/prefs/tabs.md") < hits.index("/memories/facts/tabs.md")
    # a memory about gofmt is what "gofmt indentation" asks for, preference or not
    assert paths(r.search("gofmt indentation", (WS,)))[0] == "/memories/facts/go-style.md"


def test_prefix_search_still_finds_every_form(store: Path) -> None:
    write(store, "facts/deploy.md", memory("project-fact", "# Deployment\n\nDeployments run nightly.\n", WS))
    r = recall(store)
    for typed in ("depl", "deploym", "deployment"):
        assert paths(r.search(typed, (WS,), prefix_last=True)) == ["/memories/facts/deploy.md"], typed


def test_search_returns_fewer_results_rather_than_weak_ones(store: Path) -> None:
    write(
        store,
        "facts/pgbouncer.md",
        memory("project-fact", "# Pgbouncer\n\nPgbouncer pools Postgres connections; pool size 40.\n", WS),
    )
    for i in range(6):  # each shares one common word of the turn, nothing else
        write(store, f"notes/n{i}.md", memory("episodic", f"# Note {i}\n\nThe size of batch {i}.\n", WS))
    r = recall(store)
    hits = paths(r.search("pgbouncer pool size for postgres connections", (WS,)))
    assert hits[0] == "/memories/facts/pgbouncer.md"
    assert len(hits) == 1  # "size" alone is under the floor


def test_a_word_written_after_the_snapshot_is_found_as_itself(store: Path) -> None:
    for name in ("a", "b"):
        write(store, f"facts/{name}.md", memory("project-fact", f"# {name}\n\nThe zanzibat relay.\n", WS))
    r = recall(store)
    assert len(r.search("zanzibar", (WS,))) == 2  # no memory says zanzibar yet: the typo fix answers
    write(store, "facts/new.md", memory("project-fact", "# New\n\nThe zanzibar gateway.\n", WS))
    r.sync_disk()  # same index, vocabulary snapshot taken before the write
    assert paths(r.search("zanzibar", (WS,))) == ["/memories/facts/new.md"]


def test_a_pool_of_memories_holding_every_word_is_ranked_alone(store: Path) -> None:
    # Enough memories hold both words to fill the pool: those holding one word are not scored at all.
    for i in range(20):
        write(
            store,
            f"notes/both{i}.md",
            memory("episodic", f"# Note {i}\n\nThe relay and the beacon {i}.\n", WS),
        )
    write(store, "notes/relay.md", memory("episodic", "# Relay\n\nRelay relay relay, the relay.\n", WS))
    r = recall(store)
    hits = paths(r.search("relay beacon", (WS,), limit=5))
    assert len(hits) == 5 and all("/both" in h for h in hits)
