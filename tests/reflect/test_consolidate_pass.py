"""Consolidation with a model: the real SDK clients against fake servers on 127.0.0.1. One proposal
merges a duplicate pair and fixes a contradiction; applying it leaves exactly the proposed files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from fake_models import FakeModel
from reflect_helpers import KEY, snapshot, write
from test_reflect_pass import PROVIDERS, config, end_turn, tool_turn, user_text

from kin_memory.consolidate.candidates import survey
from kin_memory.consolidate.run import consolidate, consolidation_proposal
from kin_memory.proposals.apply import apply_proposal
from kin_memory.store.store import load_store

DEPLOY = (
    "# Deploy\n\nWe deploy the billing service with blue-green releases every Friday afternoon, after the "
    "release checklist is signed off by the on-call engineer and the change log is published.\n"
)


def fact(body: str, ws: str) -> str:
    return f"---\ncategory: project-fact\nworkspace: {ws}\n---\n{body}"


@pytest.fixture
def messy(tmp_path: Path, workspace: str) -> Path:
    root = tmp_path / "messy"
    write(root / "facts" / "deploy.md", fact(DEPLOY, workspace))
    write(root / "facts" / "deploy-copy.md", fact(DEPLOY.replace("afternoon", "afternoons"), workspace))
    write(
        root / "facts" / "db.md",
        fact("# Billing DB\n\nThe billing database listens on port 5432.\n", workspace),
    )
    old = write(root / "facts" / "db-old.md", fact("# Billing DB\n\nBilling DB port is 5433.\n", workspace))
    os.utime(old, (time.time() - 30 * 86400,) * 2)
    write(root / "facts" / "other.md", fact("The billing database listens on port 7777.\n", "/elsewhere"))
    return Path(os.path.realpath(root))


def candidates(root: Path, workspace: str):
    store = load_store(root)
    found = survey(store, (workspace,), time.time())
    return found, {p: m for c in found for p in c.paths if (m := store.get(p)) is not None}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_proposal_merges_duplicates_and_fixes_a_contradiction(provider, messy, workspace):
    found, memories = candidates(messy, workspace)
    assert [(c.kind, c.paths) for c in found] == [
        ("contradiction", ("/memories/facts/db-old.md", "/memories/facts/db.md")),
        ("duplicate", ("/memories/facts/deploy-copy.md", "/memories/facts/deploy.md")),
    ]
    before = snapshot(messy)
    steps = [
        tool_turn(
            provider,
            {"command": "view", "path": "/memories/facts/db.md"},
            {"command": "delete", "path": "/memories/facts/deploy-copy.md"},
            {
                "command": "str_replace",
                "path": "/memories/facts/db-old.md",
                "old_str": "5433",
                "new_str": "5432",
            },
        ),
        end_turn(provider, "deleted /memories/facts/deploy-copy.md (a copy of deploy.md); fixed the port."),
    ]
    with FakeModel(steps) as fake:
        done = consolidate(messy, workspace, found, memories, config(provider, fake), KEY)
    proposal = consolidation_proposal(messy, workspace, done)
    first = user_text(provider, fake.requests[0])
    assert "Group 1: contradiction" in first and "Group 2: duplicate" in first
    assert (
        "port is 5433" in first and "blue-green" in first and "7777" not in first
    )  # other workspace: absent
    assert snapshot(messy) == before  # a pass never writes
    assert proposal.source == "consolidate" and proposal.workspace == workspace
    assert [(c.kind, c.path) for c in proposal.changes] == [
        ("edit", "/memories/facts/db-old.md"),
        ("delete", "/memories/facts/deploy-copy.md"),
    ]
    lines = proposal.summary.split("\n- ")[1:]
    assert lines[0].startswith("edits /memories/facts/db-old.md (contradiction: ")
    assert "read /memories/facts/db-old.md, /memories/facts/db.md" in lines[0]
    assert lines[1].startswith("deletes /memories/facts/deploy-copy.md (duplicate: 2 memories say mostly")
    assert "/memories/facts/deploy.md" in lines[1]
    assert proposal.summary.startswith("2 candidate groups given to the model.")
    result = apply_proposal(messy, proposal)
    assert sorted(result.applied) == ["/memories/facts/db-old.md", "/memories/facts/deploy-copy.md"]
    expected = dict(before)
    del expected["facts/deploy-copy.md"]
    expected["facts/db-old.md"] = before["facts/db-old.md"].replace(b"5433", b"5432")
    assert snapshot(messy) == expected


def test_only_the_largest_groups_go_to_the_model_and_the_rest_are_listed(messy, workspace):
    found, memories = candidates(messy, workspace)
    with FakeModel([end_turn("openai", "Nothing to change.")]) as fake:
        done = consolidate(messy, workspace, found, memories, config("openai", fake), KEY, limit=1)
    proposal = consolidation_proposal(messy, workspace, done)
    sent = json.dumps(fake.requests[0].body)
    assert "Group 1: contradiction" in sent and "Group 2" not in sent
    assert ("Not processed in this pass (1): duplicate: /memories/facts/deploy-copy.md, "
            "/memories/facts/deploy.md.") in proposal.summary  # fmt: skip
    assert proposal.changes == () and "There is nothing to write." in proposal.summary


def test_no_candidates_asks_the_model_nothing(tmp_path, workspace):
    root = tmp_path / "clean"
    write(root / "facts" / "one.md", fact("# One\n\nA single fact.\n", workspace))
    found, memories = candidates(root, workspace)
    with FakeModel([]) as fake:
        done = consolidate(root, workspace, found, memories, config("openai", fake), KEY)
    proposal = consolidation_proposal(root, workspace, done)
    assert found == [] and fake.requests == [] and proposal.changes == ()
    assert proposal.summary == "There are no consolidation candidates; the model was not asked anything."
