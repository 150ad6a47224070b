"""Two machines syncing one store through a bare remote: what comes in, what goes out, what conflicts,
with real git and real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sync_machines import DEPLOY, Machine, git, no_marker_anywhere

from kin_memory.gitsync.records import FOLDER, conflicts, record_rel
from kin_memory.gitsync.report import Change
from kin_memory.history.query import content_of, history_of

FACT = "facts/deploy.md"
VFACT = "/memories/facts/deploy.md"


def remote_files(remote: Path) -> list[str]:
    return git(remote, "ls-tree", "-r", "--name-only", "main").splitlines()


def both_synced(first: Machine, second: Machine) -> None:
    first.sync()
    second.sync()


def test_the_first_sync_makes_the_repository_and_pushes(laptop: Machine, remote: Path) -> None:
    laptop.write(FACT, DEPLOY)
    report = laptop.sync()
    assert (laptop.root / ".git").is_dir()
    assert git(laptop.root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert report.remote_was_empty
    assert report.outgoing == [Change(VFACT, "create", "laptop")]
    files = remote_files(remote)
    assert FACT in files and ".gitignore" not in files  # kin chooses what it commits
    assert not [f for f in files if f.startswith(".kin-index")]  # the hidden folder never leaves
    assert (laptop.root / ".kin-index" / "machine.json").is_file()
    assert git(laptop.root, "status", "--porcelain") == ""
    trailer = git(remote, "log", "-1", "--format=%(trailers:key=Kin-Machine,valueonly)", "main")
    assert trailer.strip().endswith(" laptop")


def test_a_memory_written_on_one_machine_reaches_the_other_with_its_name(
    laptop: Machine, desktop: Machine
) -> None:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    report = desktop.sync()
    assert desktop.read(FACT) == DEPLOY
    assert report.incoming == [Change(VFACT, "create", "laptop")]
    assert any("came in" in s and VFACT in s and "laptop" in s for s in report.summary())


def test_a_second_sync_with_nothing_changed_says_so_and_makes_no_commit(laptop: Machine) -> None:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    before = git(laptop.root, "rev-parse", "main")
    report = laptop.sync()
    assert git(laptop.root, "rev-parse", "main") == before
    assert report.summary() == ["Nothing to sync: this store and the remote already hold the same memories."]


def test_edits_to_different_lines_are_merged_on_both(laptop: Machine, desktop: Machine) -> None:
    laptop.write(FACT, DEPLOY)
    both_synced(laptop, desktop)
    laptop.write(FACT, DEPLOY.replace("staging cluster", "canary cluster"))
    desktop.write(FACT, DEPLOY.replace("#ops channel", "#api-alerts channel"))
    laptop.sync()
    report = desktop.sync()
    merged = DEPLOY.replace("staging cluster", "canary cluster").replace(
        "#ops channel", "#api-alerts channel"
    )
    assert desktop.read(FACT) == merged
    assert report.conflicts == []
    assert report.incoming == [Change(VFACT, "edit", "laptop")]
    laptop.sync()
    assert laptop.read(FACT) == merged
    assert conflicts(laptop.root) == [] and conflicts(desktop.root) == []


def test_the_same_line_edited_on_both_ends_valid_on_both_with_a_record(
    laptop: Machine, desktop: Machine
) -> None:
    laptop.write(FACT, DEPLOY)
    both_synced(laptop, desktop)
    mine_on_laptop = DEPLOY.replace("staging cluster", "canary cluster")
    mine_on_desktop = DEPLOY.replace("staging cluster", "blue-green cluster")
    laptop.write(FACT, mine_on_laptop)
    desktop.write(FACT, mine_on_desktop)
    laptop.sync()
    report = desktop.sync()
    # the desktop keeps what its person last saw
    assert desktop.read(FACT) == mine_on_desktop
    [conflict] = report.conflicts
    assert (conflict.path, conflict.kind, conflict.kept, conflict.other) == (
        VFACT,
        "overlap",
        "mine",
        "laptop",
    )
    assert report.incoming == []
    later = laptop.sync()
    # the laptop gets the merge's result, and hears of the conflict
    assert laptop.read(FACT) == mine_on_desktop
    assert [(c.path, c.kept, c.other) for c in later.conflicts] == [(VFACT, "theirs", "desktop")]
    for machine in (laptop, desktop):
        [record] = conflicts(machine.root)
        assert record.path == VFACT and record.kind == "overlap" and record.kept == "desktop"
        assert {(v.machine, v.content) for v in record.versions} == {
            ("laptop", mine_on_laptop.encode()),
            ("desktop", mine_on_desktop.encode()),
        }
        assert no_marker_anywhere(machine.root) == []
    assert git(laptop.root, "status", "--porcelain") == ""


@pytest.mark.parametrize("deleter", ["laptop", "desktop"])
def test_delete_against_edit_keeps_the_edit_on_both(laptop: Machine, desktop: Machine, deleter: str) -> None:
    laptop.write(FACT, DEPLOY)
    both_synced(laptop, desktop)
    edited = DEPLOY.replace("Alerts go to", "Pages go to")
    gone, editor = (laptop, desktop) if deleter == "laptop" else (desktop, laptop)
    (gone.root / FACT).unlink()
    editor.write(FACT, edited)
    first, second = (laptop, desktop)
    first.sync()
    report = second.sync()
    [conflict] = report.conflicts
    assert conflict.kind == "delete-vs-edit"
    assert conflict.deleted == ("theirs" if second is editor else "mine")
    first.sync()
    assert laptop.read(FACT) == edited and desktop.read(FACT) == edited
    for machine in (laptop, desktop):
        [record] = conflicts(machine.root)
        assert sorted((v.content is None) for v in record.versions) == [False, True]


def test_history_keeps_the_overwritten_version_labelled_with_its_source(
    laptop: Machine, desktop: Machine
) -> None:
    laptop.write(FACT, DEPLOY)
    both_synced(laptop, desktop)
    newer = DEPLOY.replace("Alerts go to", "Pages go to")
    laptop.write(FACT, newer)
    laptop.sync()
    desktop.sync()
    versions = history_of(desktop.root, VFACT)
    assert versions[0].source == "sync:laptop"
    assert content_of(desktop.root, VFACT, versions[0].version) == newer.encode()
    older = [v for v in versions[1:] if not v.deleted]
    assert any(content_of(desktop.root, VFACT, v.version) == DEPLOY.encode() for v in older)


def test_records_and_the_ignore_file_are_committed_the_hidden_folder_never(laptop: Machine, desktop: Machine,
                                                                           remote: Path) -> None:  # fmt: skip
    laptop.write(FACT, DEPLOY)
    both_synced(laptop, desktop)
    laptop.write(FACT, DEPLOY.replace("main", "trunk"))
    desktop.write(FACT, DEPLOY.replace("main", "release"))
    both_synced(laptop, desktop)
    files = remote_files(remote)
    assert record_rel(VFACT) in files and ".gitignore" not in files
    assert all(not f.startswith(".kin-index/") for f in files)
    assert json.loads((desktop.root / record_rel(VFACT)).read_text())["path"] == VFACT
    assert record_rel(VFACT).startswith(FOLDER)


def test_a_change_pushed_meanwhile_is_merged_again(laptop: Machine, desktop: Machine, devbox: Machine,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from kin_memory.gitsync import engine

    laptop.write(FACT, DEPLOY)
    both_synced(laptop, desktop)
    devbox.sync()
    desktop.write("prefs/tone.md", "---\ncategory: preference\n---\n# Tone\n\nShort commit messages.\n")
    devbox.write("facts/ci.md", "---\ncategory: project-fact\n---\n# CI\n\nCI runs on every push.\n")
    real_push = engine.push
    calls: list[int] = []

    def push_after_devbox(root: Path) -> bool:
        calls.append(1)
        if root == desktop.root and len(calls) == 1:
            devbox.sync()  # someone pushes between the desktop's fetch and its push
        return real_push(root)

    monkeypatch.setattr(engine, "push", push_after_devbox)
    report = desktop.sync()
    assert len(calls) == 3  # the desktop's rejected push, the devbox's, the desktop's again
    assert Change("/memories/facts/ci.md", "create", "devbox") in report.incoming
    assert report.outgoing == [Change("/memories/prefs/tone.md", "create", "desktop")]
    monkeypatch.setattr(engine, "push", real_push)
    laptop.sync()
    assert (laptop.root / "facts/ci.md").is_file() and (laptop.root / "prefs/tone.md").is_file()
