"""The whole story through the command line, as two people would run it: two machines (two HOMEs, two
stores), one repository cloned at a different path on each, a bare remote folder.

- a fact written on the laptop for the repository surfaces in the desktop's search of its own clone;
- the same memory edited on both ends valid on both, with KM800 where the edits overlapped, and both
  versions kept;
- delete against edit keeps the edit;
- no file under either store ever holds a conflict marker;
- the desktop's review queue lists the laptop's change with its source."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support.gitrepos import clone, git, isolate_git, make_origin

from kin_memory.history.query import content_of, history_of

MARKERS = ("<<<<<<<", ">>>>>>>", "\n=======\n")


@dataclass
class Machine:
    name: str
    home: Path
    store: Path
    clone: str

    def run(self, *args: str, cwd: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HOME": str(self.home), "KIN_MEMORY_DIR": str(self.store)}
        env["GIT_CONFIG_GLOBAL"] = str(self.home / "gitconfig")
        done = subprocess.run([sys.executable, "-m", "kin_memory", *args], cwd=cwd or self.clone, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        if check:
            assert done.returncode in (0, 1), done.stderr
        return done

    def tool(self, **call: str) -> str:
        return self.run("tool", json.dumps(call)).stdout

    def sync(self) -> str:
        return self.run("sync").stdout


def memory(body: str, workspace: str) -> str:
    return f"---\ncategory: project-fact\nworkspace: {workspace}\n---\n{body}"


@pytest.fixture
def machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Machine, Machine]:
    isolate_git(tmp_path, monkeypatch)
    origin = make_origin(tmp_path)
    remote = tmp_path / "memory-remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    out = []
    for name, where in (("laptop", "laptop/src/api"), ("desktop", "desktop/code/api")):
        home = tmp_path / f"home-{name}"
        home.mkdir()
        (home / "gitconfig").write_text("")
        store = home / ".kin" / "memory"
        store.mkdir(parents=True)
        m = Machine(name, home, store, clone(origin, tmp_path / where))
        done = m.run("sync", "--name", name, "--remote", str(remote))
        assert done.returncode == 0, done.stdout + done.stderr
        m.run("changes")  # the store in use: its review queue started (the first look marks all reviewed)
        out.append(m)
    return out[0], out[1]


def no_marker_anywhere(root: Path) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".kin-index")]
        for name in files:
            text = (Path(folder) / name).read_bytes().decode("utf-8", "replace")
            if any(m in text for m in MARKERS):
                found.append(os.path.join(folder, name))
    return found


def test_a_fact_written_on_the_laptop_surfaces_in_the_desktops_clone(machines):
    laptop, desktop = machines
    laptop.tool(command="create", path="/memories/facts/deploy.md",
                file_text=memory("# Deploys\n\nThe API deploys with the blue-green pipeline.\n", laptop.clone))  # fmt: skip
    assert "went out" in laptop.sync()
    said = desktop.sync()
    assert "/memories/facts/deploy.md (new on laptop)" in said
    hits = json.loads(desktop.run("search", "blue-green pipeline", "--json").stdout)["results"]
    assert [h["path"] for h in hits] == ["/memories/facts/deploy.md"]
    check = desktop.run("check", "--format", "json")
    assert not [f for f in json.loads(check.stdout) if f["code"] == "KM301"]
    # from an unrelated folder the memory stays out of sight
    elsewhere = desktop.home / "elsewhere"
    elsewhere.mkdir()
    hits = json.loads(desktop.run("search", "blue-green pipeline", "--json", cwd=str(elsewhere)).stdout)[
        "results"
    ]
    assert hits == []
    queue = json.loads(desktop.run("changes", "--json").stdout)["changes"]
    assert [(c["path"], c["kind"], c["source"]) for c in queue] == [
        ("/memories/facts/deploy.md", "created", "sync:laptop")
    ]


def test_the_same_memory_edited_on_both_ends_valid_with_km800_and_both_kept(machines):
    laptop, desktop = machines
    path = "/memories/facts/db.md"
    laptop.tool(
        command="create",
        path=path,
        file_text=memory("# Database\n\nPostgres listens on port 5432.\n", "global"),
    )
    laptop.sync()
    desktop.sync()
    laptop.tool(command="str_replace", path=path, old_str="port 5432", new_str="port 5433")
    desktop.tool(command="str_replace", path=path, old_str="port 5432", new_str="port 6543")
    laptop.sync()
    said = desktop.sync()
    assert "changed in the same place here and on laptop" in said
    laptop.sync()
    for m in machines:
        text = (m.store / "facts" / "db.md").read_text()
        assert (
            text.startswith("---\ncategory: project-fact\n") and "port 6543" in text
        )  # the desktop synced second
        assert no_marker_anywhere(m.store) == []
        found = [f for f in json.loads(m.run("check", "--format", "json").stdout) if f["code"] == "KM800"]
        assert len(found) == 1 and found[0]["path"].endswith("facts/db.md"), found
    # nothing lost: the laptop's history holds its own edit and the desktop's, which replaced it
    kept = [
        content_of(laptop.store, path, v.version).decode() for v in history_of(laptop.store, path) if v.sha
    ]
    assert any("port 5433" in c for c in kept) and any("port 6543" in c for c in kept)
    # keep the laptop's version from the laptop: the record goes, and the desktop follows at its next sync
    done = laptop.run("sync", "--keep", "mine", path)
    assert done.returncode == 0, done.stdout
    laptop.sync()
    desktop.sync()
    for m in machines:
        assert "port 5433" in (m.store / "facts" / "db.md").read_text()
        assert [
            f for f in json.loads(m.run("check", "--format", "json").stdout) if f["code"] == "KM800"
        ] == []


def test_delete_against_edit_keeps_the_edit(machines):
    laptop, desktop = machines
    path = "/memories/facts/ci.md"
    laptop.tool(
        command="create", path=path, file_text=memory("# CI\n\nCI runs on GitHub Actions.\n", "global")
    )
    laptop.sync()
    desktop.sync()
    laptop.tool(command="delete", path=path)
    desktop.tool(
        command="str_replace", path=path, old_str="GitHub Actions", new_str="GitHub Actions, four jobs"
    )
    laptop.sync()
    said = desktop.sync()
    assert "deleted on laptop (as that machine names itself) and edited here: the edit is kept" in said
    laptop.sync()
    for m in machines:
        assert "four jobs" in (m.store / "facts" / "ci.md").read_text()
        assert no_marker_anywhere(m.store) == []


def test_accept_and_revert_work_on_what_came_by_sync(machines):
    laptop, desktop = machines
    for name in ("keep", "drop"):
        laptop.tool(command="create", path=f"/memories/facts/{name}.md",
                    file_text=memory(f"# {name}\n\nA fact to {name}.\n", "global"))  # fmt: skip
    laptop.sync()
    desktop.sync()
    queued = {c["path"]: c["source"] for c in json.loads(desktop.run("changes", "--json").stdout)["changes"]}
    assert queued == {"/memories/facts/keep.md": "sync:laptop", "/memories/facts/drop.md": "sync:laptop"}
    desktop.run("accept", "/memories/facts/keep.md")
    desktop.run("revert", "/memories/facts/drop.md")  # created since the last review: reverting deletes it
    assert json.loads(desktop.run("changes", "--json").stdout)["changes"] == []
    assert not (desktop.store / "facts" / "drop.md").exists()
    desktop.sync()
    laptop.sync()  # the revert travels like any other change
    assert not (laptop.store / "facts" / "drop.md").exists()
    assert (laptop.store / "facts" / "keep.md").exists()


def test_a_memory_that_looks_like_a_secret_going_out_is_named(machines):
    laptop, _desktop = machines
    laptop.tool(command="create", path="/memories/facts/access.md",
                file_text=memory("# Access\n\nThe staging key is sk-ant-" + "a1B2" * 10 + " for now.\n", "global"))  # fmt: skip
    laptop.tool(
        command="create",
        path="/memories/facts/plain.md",
        file_text=memory("# Plain\n\nNothing here.\n", "global"),
    )
    said = laptop.sync()
    assert "A memory that went out looks like it holds a secret (KM602): /memories/facts/access.md." in said
    assert "plain.md" not in said.split("KM602")[1]
