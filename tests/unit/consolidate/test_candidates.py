"""Consolidation candidates over a real store."""

from __future__ import annotations

import os
import time
from pathlib import Path

from kin_memory.consolidate.candidates import survey
from kin_memory.store.store import load_store

DAY = 86400
NOW = time.time()
WS = "/src/api"
DEPLOY = (
    "# Deploy\n\nWe deploy the billing service with blue-green releases every Friday afternoon, after the "
    "release checklist is signed off by the on-call engineer and the change log is published.\n"
)


def write(root: Path, rel: str, text: str, age_days: float = 0) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    when = NOW - age_days * DAY
    os.utime(path, (when, when))


def fact(body: str, ws: str = "global") -> str:
    return f"---\ncategory: project-fact\nworkspace: {ws}\n---\n{body}"


def fill(root: Path) -> None:
    write(root, "facts/deploy.md", fact(DEPLOY))
    write(root, "facts/deploy-2.md", fact(DEPLOY.replace("Friday afternoon", "Friday")))
    write(
        root,
        "facts/deploy-3.md",
        fact(DEPLOY.replace("Friday afternoon", "Friday").replace("engineer", "person")),
    )
    write(root, "facts/db.md", fact("# Billing DB\n\nThe billing database listens on port 5432.\n", WS))
    write(root, "facts/db-old.md", fact("# Billing DB\n\nBilling DB port is 5433.\n"))
    write(root, "facts/auth.md", fact("The auth service listens on port 8081.\n"))
    write(root, "facts/other-ws.md", fact("The billing database listens on port 6000.\n", "/src/other"))
    write(root, "facts/old-ci.md", fact("# CI\n\nCI used Jenkins.\n"), age_days=400)
    write(
        root,
        "episodes/runbook.md",
        "---\ncategory: episodic\n---\nRestart the cache with `make restart`; "
        "the cache always runs on port 6380.\n",
        age_days=60,
    )
    write(
        root,
        "episodes/chat.md",
        "---\ncategory: episodic\n---\nWe had lunch and talked about plans.\n",
        age_days=60,
    )
    write(root, "sessions/s.md", "---\ncategory: session\n---\nThe billing database listens on port 9999.\n")


def test_groups_duplicates_contradictions_stale_and_promotions(tmp_path):
    root = tmp_path / "memory"
    fill(root)
    store = load_store(root)
    found = survey(store, (WS,), NOW)
    got = [(c.kind, c.paths) for c in found]
    assert got == [
        ("contradiction", ("/memories/facts/db-old.md", "/memories/facts/db.md")),
        (
            "duplicate",
            ("/memories/facts/deploy-2.md", "/memories/facts/deploy-3.md", "/memories/facts/deploy.md"),
        ),
        ("promote", ("/memories/episodes/runbook.md",)),
        ("stale", ("/memories/facts/old-ci.md",)),
    ]
    by_kind = {c.kind: c.reason for c in found}
    assert by_kind["contradiction"].endswith("disagree: port 5433 vs 5432")
    assert by_kind["duplicate"].startswith("3 memories say mostly the same thing")
    assert "400 days" in by_kind["stale"]


def test_another_workspaces_memories_are_left_out_and_the_operator_view_sees_them(tmp_path):
    root = tmp_path / "memory"
    fill(root)
    store = load_store(root)
    mine = {p for c in survey(store, (WS,), NOW) for p in c.paths}
    assert "/memories/facts/other-ws.md" not in mine and "/memories/sessions/s.md" not in mine
    everything = [c for c in survey(store, (), NOW) if c.kind == "contradiction"]
    assert any("/memories/facts/other-ws.md" in c.paths for c in everything)


def test_duplicates_are_found_among_many_memories_and_boilerplate_groups_nothing(tmp_path):
    import random

    root = tmp_path / "memory"
    words = [f"w{i}" for i in range(3000)]
    rng = random.Random(7)
    shared = "Written by the platform team; ask in the platform channel before you change it."
    for i in range(400):  # distinct memories that all end with the same boilerplate sentence
        write(
            root,
            f"facts/n{i:03}.md",
            fact(" ".join(rng.choice(words) for _ in range(40)) + ". " + shared + "\n"),
        )
    write(root, "facts/a.md", fact(DEPLOY))
    write(root, "facts/b.md", fact(DEPLOY.replace("engineer", "person")))
    write(root, "facts/one-line.md", fact("Deploy.\n"))
    write(root, "facts/one-line-2.md", fact("Deploy.\n"))
    found = [c for c in survey(load_store(root), (), NOW) if c.kind == "duplicate"]
    assert [c.paths for c in found] == [("/memories/facts/a.md", "/memories/facts/b.md")]
