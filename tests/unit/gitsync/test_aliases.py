"""Stamps that follow a repository: one repository cloned on a "laptop" and on a "desktop" (two stores
on one machine, real git, the laptop's clone gone from this machine as it would be on a desktop). A
memory stamped with the laptop's path surfaces from the desktop's clone (visibility, the CLI's search,
the memory tool's view) and nowhere else; hostile machine files are ignored."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.lsp.session import Session
from kin_memory.mcp.agents import AgentStore
from kin_memory.store import workspace_aliases as aliases
from kin_memory.store.machine import this_machine
from kin_memory.store.workspace import active_workspaces, own_workspaces, visibility, with_equivalents
from kin_memory.store.workspace_aliases import (
    MAX_FILE,
    MAX_REPOSITORIES,
    equivalent_stamps,
    machines_dir,
    record_if_synced,
    record_workspaces,
)
from kin_memory.tool.commands.dispatch import run as run_tool
from support.gitrepos import TwoMachines, clone, isolate_git, make_origin, two_machines
from support.memfiles import memory, write

BODY = "# Deploy\n\nThe api deploys through the zebrafish staging cluster first.\n"


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TwoMachines:
    return two_machines(tmp_path, monkeypatch)


def laptop_file(two: TwoMachines) -> Path:
    return machines_dir(two.desktop_store) / f"{this_machine(two.laptop_store).id}.json"


def test_the_laptop_path_is_an_equivalent_stamp_of_the_desktop_clone(two: TwoMachines) -> None:
    store = two.desktop_store
    assert equivalent_stamps(store, two.desktop_clone) == (two.laptop_clone,)
    assert equivalent_stamps(store, two.unrelated) == ()
    # this machine's own path first: it stamps what the agent writes
    assert with_equivalents((two.desktop_clone,), store) == (two.desktop_clone, two.laptop_clone)
    assert active_workspaces([two.desktop_clone], store) == (two.desktop_clone, two.laptop_clone)
    assert own_workspaces((two.desktop_clone, two.laptop_clone), store) == (two.desktop_clone,)
    # on the laptop's own store, its own file maps nothing
    assert equivalent_stamps(two.laptop_store, two.laptop_clone) == ()


def test_a_memory_stamped_on_the_laptop_is_visible_from_the_desktop_clone_only(two: TwoMachines) -> None:
    store = two.desktop_store
    assert visibility(two.laptop_clone, with_equivalents((two.desktop_clone,), store)).visible
    assert not visibility(two.laptop_clone, with_equivalents((two.unrelated,), store)).visible


def cli(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KIN_MEMORY_DIR": str(store)}
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", *args, "--root", str(store)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def test_search_and_the_tool_surface_it_from_the_desktop_clone(two: TwoMachines) -> None:
    store = two.desktop_store
    write(store, "facts/deploy.md", memory("project-fact", BODY, two.laptop_clone))
    found = cli(store, "search", "zebrafish staging", "--json", "--workspace", two.desktop_clone)
    assert found.returncode == 0, found.stderr
    assert [r["path"] for r in json.loads(found.stdout)["results"]] == ["/memories/facts/deploy.md"]
    elsewhere = cli(store, "search", "zebrafish staging", "--json", "--workspace", two.unrelated)
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert json.loads(elsewhere.stdout)["results"] == []

    # the MCP server's search (the agents' door)
    agents = AgentStore(store)
    assert "/memories/facts/deploy.md" in agents.search("zebrafish staging", None, two.desktop_clone).text
    assert "deploy" not in agents.search("zebrafish staging", None, two.unrelated).text
    # the language server's session: its editor folder is the desktop clone
    session = Session(str(store))
    session.folders = [two.desktop_clone]
    assert session.active() == (two.desktop_clone, two.laptop_clone)

    view = {"command": "view", "path": "/memories/facts/deploy.md"}
    seen = run_tool(store, two.desktop_clone, view)
    assert not seen["isError"] and "zebrafish" in str(seen["content"])
    hidden = run_tool(store, two.unrelated, view)
    assert hidden["isError"] and "zebrafish" not in str(hidden["content"])


def test_a_new_memory_from_the_desktop_is_stamped_with_the_desktop_path(two: TwoMachines) -> None:
    store = two.desktop_store
    made = run_tool(store, two.desktop_clone, {"command": "create", "path": "/memories/facts/new.md",
                                              "file_text": "---\ncategory: project-fact\n---\n# New\n\nA fact.\n"})  # fmt: skip
    assert not made["isError"], made["content"]
    assert f"workspace: {two.desktop_clone}" in (store / "facts" / "new.md").read_text()


def test_a_change_of_the_machine_file_is_seen_without_a_restart(two: TwoMachines) -> None:
    store = two.desktop_store
    assert equivalent_stamps(store, two.desktop_clone) == (two.laptop_clone,)
    data = json.loads(laptop_file(two).read_text())
    ids = data["repositories"].pop(two.laptop_clone)
    data["repositories"]["/srv/moved/api"] = ids
    laptop_file(two).write_text(json.dumps(data))
    assert equivalent_stamps(store, two.desktop_clone) == ("/srv/moved/api",)


def test_a_folder_of_this_machine_is_never_mapped(two: TwoMachines) -> None:
    """Another machine keeping the repository where this machine has another one: that folder's
    memories stay its own."""
    data = json.loads(laptop_file(two).read_text())
    data["repositories"][two.unrelated] = data["repositories"][two.laptop_clone]
    laptop_file(two).write_text(json.dumps(data))
    assert equivalent_stamps(two.desktop_store, two.desktop_clone) == (two.laptop_clone,)


def test_recording_writes_only_when_it_changed(two: TwoMachines) -> None:
    mine = machines_dir(two.desktop_store) / f"{this_machine(two.desktop_store).id}.json"
    before = os.stat(mine)
    assert record_workspaces(two.desktop_store, [two.desktop_clone]) is False
    assert os.stat(mine).st_ino == before.st_ino and os.stat(mine).st_mtime_ns == before.st_mtime_ns
    assert json.loads(mine.read_text())["repositories"].keys() == {two.desktop_clone}
    assert record_workspaces(two.desktop_store, [two.unrelated, two.desktop_clone]) is True
    assert json.loads(mine.read_text())["repositories"].keys() == {two.desktop_clone, two.unrelated}


def test_a_store_that_is_not_synced_records_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(tmp_path, monkeypatch)
    store = tmp_path / "store"
    store.mkdir()
    api = clone(make_origin(tmp_path), tmp_path / "api")
    assert record_if_synced(store, [api]) is False
    assert not (store / ".kin-sync").exists()
    (store / ".git").mkdir()
    assert record_if_synced(store, [api]) is True
    assert len(list(machines_dir(store).iterdir())) == 1


def _with(two: TwoMachines, extra: dict[str, list[str]]) -> bytes:
    data = json.loads(laptop_file(two).read_text())
    data["repositories"].update(extra)
    return json.dumps(data).encode()


HOSTILE = {
    "relative path": lambda t, ids: _with(t, {"src/api": ids}),
    "dot-dot": lambda t, ids: _with(t, {"/home/me/../api": ids}),
    "control characters": lambda t, ids: _with(t, {"/home/me/a\x1b[31mpi": ids}),
    "bidirectional": lambda t, ids: _with(t, {"/home/me/a\u202epi": ids}),
    "an identity with a newline": lambda t, ids: _with(t, {"/home/me/x": ["root:a\nb"]}),
    "too many repositories": lambda t, ids: _with(t, {f"/r/{i}": ids for i in range(MAX_REPOSITORIES + 1)}),
    "huge": lambda t, ids: (
        _with(t, {f"/r/{i}": ids[:1] for i in range(50)})[:-1] + b', "pad": "' + b"x" * MAX_FILE + b'"}'
    ),
    "not JSON": lambda t, ids: b"{not json" + _with(t, {}),
    "deeply nested": lambda t, ids: b"[" * 200_000 + b"]" * 200_000,
    "not UTF-8": lambda t, ids: _with(t, {"/home/me/api": ids}).replace(b"/home/me/api", b"/home/\xff/api"),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_machine_file_is_ignored(
    two: TwoMachines, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    ids = json.loads(laptop_file(two).read_text())["repositories"][two.laptop_clone]
    laptop_file(two).write_bytes(HOSTILE[kind](two, ids))
    with caplog.at_level(logging.WARNING, logger="kin_memory.gitsync"):
        assert equivalent_stamps(two.desktop_store, two.desktop_clone) == ()
    assert any("ignored the machine file" in r.getMessage() for r in caplog.records)


def test_a_link_or_fifo_in_place_of_a_machine_file_is_not_read(two: TwoMachines, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    shutil.move(laptop_file(two), outside)
    laptop_file(two).symlink_to(outside)
    assert equivalent_stamps(two.desktop_store, two.desktop_clone) == ()
    laptop_file(two).unlink()
    os.mkfifo(laptop_file(two))
    assert equivalent_stamps(two.desktop_store, two.desktop_clone) == ()  # returns: a FIFO never blocks it


def test_a_linked_sync_folder_is_not_followed(two: TwoMachines, tmp_path: Path) -> None:
    sync_dir = two.desktop_store / aliases.SYNC_DIR
    shutil.move(sync_dir, tmp_path / "elsewhere")
    sync_dir.symlink_to(tmp_path / "elsewhere")
    assert equivalent_stamps(two.desktop_store, two.desktop_clone) == ()
    assert record_workspaces(two.desktop_store, [two.desktop_clone]) is False
