"""KM301 on a moved repository: the quick fix that cannot be wrong comes first. This machine recorded the
repository's identity (its `origin`) when it synced; after the folder moved, the one folder among the
editor's workspaces, this machine's recorded repositories and the store's other stamps whose identity is
that one is the repository's new path, and "Point at the repository's new path" is the preferred fix.
Without such a folder, re-stamping to the open workspace stays an explicit, non-preferred choice.
Real git repositories, real files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kin_memory.findings.edits import apply_edits
from kin_memory.findings.workspace import check, repointed
from kin_memory.gitsync.door import stamped_paths
from kin_memory.store.context import Context
from kin_memory.store.memory import from_text
from kin_memory.store.workspace_aliases import machines_dir, new_homes, record_workspaces
from support.gitrepos import clone, isolate_git, make_origin
from support.memfiles import memory, write


def memory_at(stamp: str):
    text = (
        f"---\ncategory: project-fact\nworkspace: {stamp}\n---\n# Refunds\n\nRefunds go through the ledger.\n"
    )
    return text, from_text(Path("/s/facts/refunds.md"), "/memories/facts/refunds.md", text, 0.0, len(text))


@pytest.fixture
def moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """payments and webapp cloned and recorded (as a sync records them); then payments moves."""
    isolate_git(tmp_path, monkeypatch)
    store = tmp_path / "store"
    store.mkdir()
    payments = clone(make_origin(tmp_path, "payments"), tmp_path / "src" / "payments")
    webapp = clone(make_origin(tmp_path, "webapp"), tmp_path / "src" / "webapp")
    assert record_workspaces(store, [payments, webapp])
    (tmp_path / "code").mkdir()
    os.rename(payments, tmp_path / "code" / "payments")
    return {"store": str(store), "old": payments, "new": os.path.realpath(tmp_path / "code" / "payments"),
            "webapp": webapp, "tmp": str(tmp_path)}  # fmt: skip


def km301(m: dict[str, str], active: tuple[str, ...]):
    text, memory = memory_at(m["old"])
    [finding] = [f for f in check(memory, Context(root=Path(m["store"]), active=active)) if f.code == "KM301"]
    return text, finding


def test_the_moved_repository_is_found_by_its_recorded_identity(moved: dict[str, str]) -> None:
    store = Path(moved["store"])
    assert new_homes(store, moved["old"], [moved["webapp"], moved["new"]]) == (moved["new"],)
    # the new folder found among what is known without being asked: nothing but webapp open
    assert new_homes(store, moved["old"], [moved["webapp"]]) == ()
    assert new_homes(store, moved["webapp"], [moved["new"]]) == ()  # webapp is not gone


def test_pointing_at_the_new_path_is_the_preferred_fix(moved: dict[str, str]) -> None:
    text, finding = km301(moved, (moved["webapp"],))
    fixes = repointed(finding, moved["old"], (moved["new"],))
    first = fixes[0]
    assert first.title == f"Point at the repository's new path {moved['new']}" and first.preferred
    assert apply_edits(text, first.edits) == text.replace(moved["old"], moved["new"])
    assert [f.title for f in fixes if f.preferred] == [first.title]
    every = next(f for f in fixes if f.command == "restampAll" and ("to", moved["new"]) in f.argument)
    assert dict(every.argument) == {"stamp": moved["old"], "to": moved["new"]}
    # re-stamping to the open workspace is still there, explicit and not preferred
    webapp = next(f for f in fixes if moved["webapp"] in f.title)
    assert webapp.title == f"Re-stamp to this workspace {moved['webapp']} (if this memory is about it)"
    assert not webapp.preferred


def test_without_the_new_path_no_fix_is_preferred(moved: dict[str, str]) -> None:
    _text, finding = km301(moved, (moved["webapp"],))
    fixes = repointed(finding, moved["old"], ())
    assert fixes == finding.fixes and not any(f.preferred for f in fixes)
    assert fixes[0].title == f"Re-stamp to this workspace {moved['webapp']} (if this memory is about it)"


def test_two_clones_of_the_moved_repository_are_each_offered_none_preferred(moved: dict[str, str]) -> None:
    store = Path(moved["store"])
    origin = Path(moved["tmp"]) / "remotes" / "payments.git"
    second = clone(origin, Path(moved["tmp"]) / "work" / "payments")
    homes = new_homes(store, moved["old"], [moved["new"], second])
    assert sorted(homes) == sorted([moved["new"], second])
    _text, finding = km301(moved, (moved["webapp"],))
    fixes = repointed(finding, moved["old"], homes)
    assert not any(f.preferred for f in fixes)
    assert {f.title for f in fixes} >= {f"Point at the repository's new path {h}" for h in homes}


def test_an_unrelated_repository_with_the_same_name_is_not_the_new_path(moved: dict[str, str]) -> None:
    other = clone(make_origin(Path(moved["tmp"]), "payments-fork"), Path(moved["tmp"]) / "fork" / "payments")
    assert new_homes(Path(moved["store"]), moved["old"], [other]) == ()


def test_a_sync_after_the_move_keeps_the_identity_a_memory_still_needs(moved: dict[str, str]) -> None:
    store = Path(moved["store"])
    record_workspaces(store, [moved["webapp"]], keep=[moved["old"]])
    [mine] = list(machines_dir(store).iterdir())
    assert moved["old"] in json.loads(mine.read_text())["repositories"]
    assert new_homes(store, moved["old"], [moved["new"]]) == (moved["new"],)
    # once no memory carries the old path, the next recording forgets it
    record_workspaces(store, [moved["webapp"]])
    assert moved["old"] not in json.loads(mine.read_text())["repositories"]


def test_a_sync_records_the_folders_stamped_and_keeps_the_gone_ones(moved: dict[str, str]) -> None:
    """What run_sync records from the store's stamps: the folders here, and the gone paths whose record
    it keeps."""
    store = Path(moved["store"])
    write(store, "facts/refunds.md", memory("project-fact", "# Refunds\n", moved["old"]))
    write(store, "facts/ledger.md", memory("project-fact", "# Ledger\n", moved["new"]))
    write(store, "facts/ui.md", memory("project-fact", "# UI\n", "global"))
    assert stamped_paths(store) == ([moved["new"]], [moved["old"]])
