"""The everyday paths through the command line: a fresh machine makes its store with its first sync; a
sync started outside any repository still records this machine's repositories; both sides of a
conflict are kept versions on both machines, shown by `history PATH N`, with the machine a commit names
shown as unverified."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_two_machines_cli import Machine, machines, memory  # noqa: F401 - the fixture

from kin_memory.history.query import history_of


def test_a_fresh_machine_makes_its_store_with_its_first_sync(machines, tmp_path: Path) -> None:  # noqa: F811
    laptop, _desktop = machines
    laptop.tool(command="create", path="/memories/facts/a.md", file_text=memory("# A\n\nAlpha.\n", "global"))
    laptop.sync()
    home = tmp_path / "home-fresh"
    home.mkdir()
    (home / "gitconfig").write_text("")
    store = home / ".kin" / "memory"
    env = {
        **os.environ,
        "HOME": str(home),
        "KIN_MEMORY_DIR": str(store),
        "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),
    }
    remote = subprocess.run(["git", "-C", str(laptop.store), "remote", "get-url", "origin"], capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "kin_memory", "sync", "--name", "fresh", "--remote", remote],
                          cwd=home, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Alpha." in (store / "facts" / "a.md").read_text()
    assert "(new on laptop); machine names are as their commits give them." in done.stdout


def test_a_sync_outside_any_repository_records_this_machine_s_repositories(machines) -> None:  # noqa: F811
    laptop, desktop = machines
    laptop.tool(command="create", path="/memories/facts/deploy.md",
                file_text=memory("# Deploys\n\nThe API deploys with the blue-green pipeline.\n", laptop.clone))  # fmt: skip
    own = json.loads((laptop.store / ".kin-index" / "machine.json").read_text())["id"]
    own_file = laptop.store / ".kin-sync" / "machines" / f"{own}.json"
    own_file.unlink()  # what the laptop recorded before is gone: only the stamps can tell
    outside = laptop.home / "elsewhere"
    outside.mkdir()
    laptop.run("sync", cwd=str(outside))
    mine = json.loads(own_file.read_text())
    assert laptop.clone in mine["repositories"]
    desktop.run("sync", cwd=str(desktop.home))
    hits = json.loads(desktop.run("search", "blue-green pipeline", "--json").stdout)["results"]
    assert [h["path"] for h in hits] == ["/memories/facts/deploy.md"]


def test_both_sides_of_a_conflict_are_kept_versions_on_both_machines(machines) -> None:  # noqa: F811
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
    desktop.sync()  # the desktop keeps its own: the laptop's is the side that lost here
    laptop.sync()
    for m, other, lost in ((desktop, "laptop", "port 5433"), (laptop, "desktop", "port 6543")):
        versions = history_of(m.store, path)
        named = [v for v in versions if v.source == f"sync:{other}"]
        assert named, [(v.version, v.source) for v in versions]
        assert any(lost in m.run("history", path, str(v.version)).stdout for v in versions if not v.deleted)
        shown = {m.run("history", path, str(v.version)).stdout for v in versions if not v.deleted}
        assert any("port 5433" in s for s in shown) and any("port 6543" in s for s in shown)
        listing = m.run("history", path).stdout
        assert f"by sync from {other} (as named by the commit)" in listing
    lost_here = [v for v in history_of(desktop.store, path) if v.source == "sync:laptop"][0]
    assert "port 5433" in desktop.run("history", path, str(lost_here.version)).stdout
