"""A store that is not synced pays nothing for sync: `check`, `search` and `stats` import no sync module
(nor the machine-file mapping and its trust lists), and ask git nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import os, runpy, sys
sys.argv = ["kin-memory", *sys.argv[1:]]
os._exit = sys.exit  # `check` ends its process at once (cli.entry): here it ends like the others
try:
    runpy.run_module("kin_memory", run_name="__main__")
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.startswith(("kin_memory.gitsync", "kin_memory.store.sync_trust",
                                                         "kin_memory.store.workspace_aliases")))
print("LOADED=" + ",".join(loaded), file=sys.stderr)
"""


@pytest.mark.parametrize("door", [("check",), ("search", "deploy"), ("stats",)])
def test_an_unsynced_store_imports_no_sync_module(tmp_path: Path, door: tuple[str, ...]) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "a.md").write_text("---\ncategory: project-fact\n---\n# Deploy\n\nBlue-green.\n")
    env = {**os.environ, "HOME": str(tmp_path), "KIN_MEMORY_DIR": str(root)}
    done = subprocess.run([sys.executable, "-c", PROBE, *door], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    [line] = [x for x in done.stderr.splitlines() if x.startswith("LOADED=")]
    assert line == "LOADED=", line
