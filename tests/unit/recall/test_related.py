"""Hover: the memories related to the paragraph under the pointer (never the frontmatter), above the
relevance floor: a hover may show nothing."""

from __future__ import annotations

from pathlib import Path

from kin_memory.recall.service import Recall
from kin_memory.store.memory import load
from kin_memory.store.paths import virtual_of_rel
from support.memfiles import memory, write

WS = "/srv/repos/app"


def recall(root: Path) -> Recall:
    r = Recall(root)
    r.sync_disk()
    return r


def hover_store(root: Path) -> str:
    """A memory whose paragraph's words each appear in exactly one other memory."""
    words = [f"zq{i}word" for i in range(12)]
    write(root, "facts/asking.md", memory("project-fact", "# Asking\n\n" + " ".join(words) + "\n", WS))
    for i, w in enumerate(words):
        write(root, f"notes/n{i}.md", memory("episodic", f"# Note {i}\n\nOnly {w} here.\n", WS))
    return "facts/asking.md"


def test_hover_returns_nothing_when_nothing_passes_the_floor(store: Path) -> None:
    rel = hover_store(store)
    r = recall(store)
    asking = load(store / rel, virtual_of_rel(rel))
    line = asking.lines.index(next(x for x in asking.lines if x.startswith("zq0word")))
    # each other memory shares one word in twelve: related to the paragraph, none of them
    assert r.related_to(asking, line, 0, (WS,)) == []
    assert [h.vpath for h, _ in r.search("zq0word", (WS,))] == [
        "/memories/notes/n0.md",
        "/memories/facts/asking.md",
    ]


def test_hover_lists_memories_sharing_the_paragraph(store: Path) -> None:
    write(
        store,
        "facts/redis.md",
        memory(
            "project-fact",
            "# Redis\n\nSessions live in Redis and expire after fifteen minutes of inactivity.\n",
            WS,
        ),
    )
    write(
        store,
        "notes/logout.md",
        memory("episodic", "# Logouts\n\nUsers were logged out: Redis sessions expire too early.\n", WS),
    )
    write(store, "facts/ci.md", memory("project-fact", "# CI\n\nThe pipeline takes fifteen minutes.\n", WS))
    r = recall(store)
    redis = load(store / "facts/redis.md", virtual_of_rel("facts/redis.md"))
    line = redis.lines.index(next(x for x in redis.lines if x.startswith("Sessions")))
    found = [f.hit.vpath for f in r.related_to(redis, line, 0, (WS,))]
    # sessions, Redis and expire outweigh "fifteen minutes"
    assert found == ["/memories/notes/logout.md", "/memories/facts/ci.md"]


def test_hover_query_never_takes_the_frontmatter(store: Path) -> None:
    # The body starts right under the frontmatter: its keys are not part of the paragraph.
    write(store, "facts/plain.md", "---\ncategory: episodic\nworkspace: " + WS + "\n---\nA quiet note.\n")
    write(
        store, "facts/loud.md", memory("project-fact", "# Loud\n\nCategory episodic workspace things.\n", WS)
    )
    write(store, "facts/loud2.md", memory("project-fact", "# Loud2\n\nEpisodic category again.\n", WS))
    write(store, "facts/quiet.md", memory("project-fact", "# Quiet\n\nA quiet room.\n", WS))
    write(store, "facts/quiet2.md", memory("project-fact", "# Quiet2\n\nQuiet hours.\n", WS))
    r = recall(store)
    plain = load(store / "facts/plain.md", virtual_of_rel("facts/plain.md"))
    found = {f.hit.vpath for f in r.related_to(plain, plain.body_line, 0, (WS,))}
    assert found and not found & {"/memories/facts/loud.md", "/memories/facts/loud2.md"}
