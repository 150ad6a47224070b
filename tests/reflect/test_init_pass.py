"""`init`: the real anthropic/openai SDK clients against fake servers on 127.0.0.1, over a fixture
repository; the proposal holds stamped project facts and nothing outside the repository is read."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from fake_models import FakeModel
from reflect_helpers import KEY, snapshot, write
from test_reflect_pass import PROVIDERS, config, end_turn, tool_turn, user_text

from kin_memory.initialize.run import init_proposal, initialize
from kin_memory.initialize.sources import read_sources
from kin_memory.proposals.apply import apply_proposal

OUTSIDE = "OUTSIDE-CANARY-7f3a: private notes that must never reach a model"
BUILD = "---\ncategory: project-fact\n---\n# Build\n\nRun `make test` before pushing; CI runs the same.\n"


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    write(repo / "AGENTS.md", "# Agents\n\nRun `make test` before pushing.\n")
    write(repo / "README.md", "# Widget\n\nWidget renders dashboards. Build with `make`.\n")
    write(repo / "docs" / "architecture.md", "# Architecture\n\nThe API talks to Postgres on port 5432.\n")
    write(repo / "docs" / "deep" / "deploy.md", "# Deploy\n\nDeploys go through blue-green releases.\n")
    write(repo / "src" / "notes.md", "# Not a document init reads\n")
    secret = write(tmp_path / "private.md", OUTSIDE)
    os.symlink(secret, repo / "docs" / "leak.md")  # a link out of the repository
    os.symlink(tmp_path, repo / "docs" / "up")  # a linked folder: never entered
    return repo


@pytest.mark.parametrize("provider", PROVIDERS)
def test_init_proposes_stamped_facts_and_reads_nothing_outside(provider, store, tmp_path):
    repo = repository(tmp_path)
    foreign = "---\ncategory: project-fact\nworkspace: /srv/another-repo\n---\nFOREIGN-FACT of another repository.\n"
    write(store / "facts" / "foreign.md", foreign)
    before = snapshot(store)
    steps = [
        tool_turn(provider, {"command": "view", "path": "/memories/facts"},
                  {"command": "create", "path": "/memories/facts/widget-build.md", "file_text": BUILD}),
        end_turn(provider, "Saved the build fact."),
    ]  # fmt: skip
    with FakeModel(steps) as fake:
        outcome, sources, stamp = initialize(store, repo, config(provider, fake), KEY)
    proposal = init_proposal(store, outcome, sources, stamp)
    assert stamp == os.path.realpath(repo)
    sent = json.dumps([r.body for r in fake.requests])
    assert OUTSIDE not in sent and "Not a document init reads" not in sent
    assert "FOREIGN-FACT" not in sent and "foreign.md" not in sent  # neither listed nor viewable
    assert "deploy.md" in json.dumps(fake.requests[1].body)  # the view answered (with the visible memories)
    first = user_text(provider, fake.requests[0])
    for name in ("AGENTS.md", "README.md", "docs/architecture.md", "docs/deep/deploy.md"):
        assert f"=== {name}" in first
    assert "Postgres on port 5432" in first and "blue-green" in first
    assert "/memories/facts/deploy.md" in first  # the memories the workspace already sees
    (change,) = proposal.changes
    assert (change.kind, change.path) == ("create", "/memories/facts/widget-build.md")
    assert change.after == BUILD.replace(
        "category: project-fact\n", f"category: project-fact\nworkspace: {stamp}\n"
    )
    assert change.workspace == stamp and proposal.source == "init" and proposal.workspace == stamp
    assert "Read 4 documents" in proposal.summary
    assert "docs/leak.md (a link pointing outside its folder)" in proposal.summary
    assert "Proposed: 1 created." in proposal.summary
    assert snapshot(store) == before  # a pass never writes
    result = apply_proposal(store, proposal)
    assert result.applied == ["/memories/facts/widget-build.md"] and not result.conflicts
    assert snapshot(store) == {**before, "facts/widget-build.md": (change.after or "").encode()}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_init_from_a_linked_worktree_stamps_the_main_tree(provider, store, tmp_path):
    main = tmp_path / "main"
    write(main / "README.md", "# Widget\n\nWidget renders dashboards.\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(main)], check=True)
    subprocess.run([*git, "-C", str(main), "add", "."], check=True)
    subprocess.run([*git, "-C", str(main), "commit", "-qm", "init"], check=True)
    linked = tmp_path / "linked"
    subprocess.run([*git, "-C", str(main), "worktree", "add", "-q", str(linked)], check=True)
    write(linked / "AGENTS.md", "# Agents\n\nOnly in the worktree: run `make lint`.\n")
    fact = "---\ncategory: project-fact\n---\n# Lint\n\nRun `make lint`.\n"
    steps = [
        tool_turn(provider, {"command": "create", "path": "/memories/facts/lint.md", "file_text": fact}),
        end_turn(provider),
    ]
    with FakeModel(steps) as fake:
        outcome, sources, stamp = initialize(store, linked, config(provider, fake), KEY)
    proposal = init_proposal(store, outcome, sources, stamp)
    assert stamp == os.path.realpath(main)
    assert "Only in the worktree" in user_text(provider, fake.requests[0])  # the worktree's files are read
    (change,) = proposal.changes
    assert f"workspace: {os.path.realpath(main)}\n" in (change.after or "")
    assert change.workspace == os.path.realpath(main)


def test_a_folder_without_documents_asks_the_model_nothing(store, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with FakeModel([]) as fake:
        outcome, sources, stamp = initialize(store, empty, config("openai", fake), KEY)
    proposal = init_proposal(store, outcome, sources, stamp)
    assert fake.requests == [] and proposal.changes == ()
    assert proposal.summary == "No documents were read from the repository. The model was not asked anything."


def test_sources_are_capped_newest_and_shortest_first_and_list_what_was_cut(tmp_path):
    repo = tmp_path / "repo"
    now = time.time()
    for name, size, age in (("docs/a.md", 3000, 10), ("docs/b.md", 1000, 10), ("docs/new.md", 5000, 0),
                            ("README.md", 9000, 10), ("CONTRIBUTING.md", 100, 20)):  # fmt: skip
        path = write(repo / name, "x" * size)
        os.utime(path, (now - age * 86400, now - age * 86400))
    got = read_sources(repo, total=10_000, per_file=4000)
    assert [(d.rel, d.cut, len(d.text)) for d in got.documents] == [
        ("docs/new.md", True, 4000),  # newest first, cut at the per-file cap
        ("docs/b.md", False, 1000),  # then the shortest of the equally new
        ("docs/a.md", False, 3000),
        ("README.md", True, 2000),  # what is left of the total
    ]
    assert got.skipped == [("CONTRIBUTING.md", "the 9 KB total was reached")]
    summary = got.summary()
    assert "Read 4 documents (9 KB): docs/new.md, docs/b.md, docs/a.md, README.md." in summary
    assert "Cut short: docs/new.md (first 3 KB of 4 KB), README.md (first 1 KB of 8 KB)." in summary


def test_a_fifo_or_a_hostile_name_in_docs_is_listed_not_read(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "docs" / "ok.md", "fine")
    os.mkfifo(repo / "docs" / "pipe.md")
    write(repo / "docs" / "evil\nline.md", "named badly")
    got = read_sources(repo)
    assert ("docs/pipe.md", "not a regular file (a FIFO)") in got.skipped
    assert "docs/evil\\nline.md" in got.summary() and "\n" not in got.summary()


def test_the_store_itself_or_a_file_is_no_repository(store, tmp_path):
    from kin_memory.initialize.run import InitError

    for folder, why in ((store, "it is the memory store itself"), (store / "facts", "it is the memory store itself"),
                        (store / "facts" / "deploy.md", "it is not a folder")):  # fmt: skip
        with FakeModel([]) as fake:
            with pytest.raises(InitError, match=why):
                initialize(store, folder, config("openai", fake), KEY)
        assert fake.requests == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_init_sends_nothing_hidden_behind_a_link_nor_a_binary_file(provider, store, tmp_path):
    """`docs/gitconfig.md -> ../.git/config` stays inside the repository but holds its credentials: a path
    with a hidden component once links are resolved is not read, nor a file that is not a text document."""
    repo = tmp_path / "creds-repo"
    write(repo / "README.md", "# Widget\n\nWidget renders dashboards.\n")
    write(
        repo / ".git" / "config", '[remote "origin"]\n\turl = https://user:GIT-CREDENTIAL-123@example.com/r\n'
    )
    write(repo / ".hidden" / "notes.md", "HIDDEN-NOTES-456\n")
    (repo / "docs").mkdir(parents=True, exist_ok=True)
    os.symlink("../.git/config", repo / "docs" / "gitconfig.md")
    os.symlink("../.hidden/notes.md", repo / "docs" / "notes.md")
    (repo / "docs" / "diagram.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00BINARY-789")
    write(repo / "README.svg", "<svg><text>SVG-NOT-A-DOCUMENT-321</text></svg>\n")  # text, but no document
    os.symlink(".git/config", repo / "CLAUDE.md")  # at the top too
    with FakeModel([end_turn(provider, "Nothing durable.")]) as fake:
        outcome, sources, stamp = initialize(store, repo, config(provider, fake), KEY)
    sent = json.dumps([r.body for r in fake.requests])
    assert "Widget renders dashboards" in sent
    for secret in ("GIT-CREDENTIAL-123", "HIDDEN-NOTES-456", "BINARY-789", "SVG-NOT-A-DOCUMENT-321"):
        assert secret not in sent
    skipped = dict(sources.skipped)
    assert skipped["docs/gitconfig.md"] == "a link into a hidden folder or file: not read"
    assert skipped["docs/notes.md"] == "a link into a hidden folder or file: not read"
    assert skipped["docs/diagram.md"] == "not a text document"
    assert skipped["README.svg"] == "not a text document"
    assert skipped["CLAUDE.md"] == "a link into a hidden folder or file: not read"
    summary = init_proposal(store, outcome, sources, stamp).summary
    assert "docs/gitconfig.md (a link into a hidden folder or file: not read)" in summary
