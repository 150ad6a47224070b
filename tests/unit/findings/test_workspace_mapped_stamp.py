"""KM301 and another machine's path: a stamp that another machine gives to a repository cloned here does
not go quiet here; a stamp of a repository that exists on the other machine only, or of no known
repository, still does. Real git clones, the real CLI check (with its findings cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.findings.workspace import check, gone_quiet
from kin_memory.store.context import Context, cli_context
from kin_memory.store.machine import this_machine
from kin_memory.store.memory import load
from support.gitrepos import TwoMachines, two_machines
from support.memfiles import memory, write

ONLY_THERE = "/home/laptop/src/only-there"
UNKNOWN = "/srv/gone/api"


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TwoMachines:
    two = two_machines(tmp_path, monkeypatch)
    store = two.desktop_store
    # The laptop also has a repository the desktop never cloned.
    mine = store / ".kin-sync" / "machines" / f"{this_machine(two.laptop_store).id}.json"
    data = json.loads(mine.read_text())
    data["repositories"][ONLY_THERE] = ["url:git.example.com/laptop/only-there"]
    mine.write_text(json.dumps(data))
    for name, stamp in (("mapped", two.laptop_clone), ("only-there", ONLY_THERE), ("unknown", UNKNOWN)):
        write(store, f"facts/{name}.md", memory("project-fact", f"# {name}\n\nA fact.\n", stamp))
    return two


def codes(store: Path, name: str, ctx: Context) -> set[str]:
    return {f.code for f in check(load(store / "facts" / f"{name}.md", f"/memories/facts/{name}.md"), ctx)}


def test_km301_is_not_reported_for_the_mapped_stamp(two: TwoMachines) -> None:
    store = two.desktop_store
    for ctx in (cli_context(store, None), cli_context(store, two.desktop_clone)):
        assert "KM301" not in codes(store, "mapped", ctx)
        assert "KM301" in codes(store, "only-there", ctx)
        assert "KM301" in codes(store, "unknown", ctx)
    # Seen from the desktop's clone it is this workspace's memory; from elsewhere, another workspace's.
    assert "KM303" not in codes(store, "mapped", cli_context(store, two.desktop_clone))
    assert "KM303" in codes(store, "mapped", cli_context(store, two.unrelated))
    assert not gone_quiet(two.laptop_clone, cli_context(store, None))


def test_the_cli_check_agrees_and_its_cache_follows_the_machine_files(two: TwoMachines) -> None:
    store = two.desktop_store
    env = {**os.environ, "KIN_MEMORY_DIR": str(store)}

    def km301() -> set[str]:
        out = subprocess.run(
            [sys.executable, "-m", "kin_memory", "check", "--root", str(store), "--format", "json",
             "--workspace", "none"],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        assert out.stdout, out.stderr
        return {Path(r["path"]).stem for r in json.loads(out.stdout) if r["code"] == "KM301"}

    assert km301() == {"only-there", "unknown"}
    # The laptop forgets the repository (its clone was deleted there): the stamp goes quiet here too,
    # though no memory file changed.
    for f in (store / ".kin-sync" / "machines").iterdir():
        if f.stem != this_machine(store).id:
            f.unlink()
    assert km301() == {"mapped", "only-there", "unknown"}
