"""Point 14 on the command line: with `memory_enabled = false` (global or the workspace's project file)
`search` and `index-preview` refuse with the memory tool's sentence naming that file; `check` still runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FACT = "---\ncategory: project-fact\nworkspace: global\n---\n# Gateway\n\nThe gateway routes TLS.\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".kin" / "memory" / "facts").mkdir(parents=True)
    (h / ".kin" / "memory" / "facts" / "gateway.md").write_text(FACT)
    return h


def _cli(home: Path, *args: str, workspace: str = "none") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KIN_MEMORY_DIR"}
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", *args, "--workspace", workspace],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "HOME": str(home)},
        cwd=str(home),
    )


@pytest.mark.parametrize("args", [("search", "gateway"), ("search", "gateway", "--json"), ("index-preview",)])
def test_cli_recall_refuses_when_the_global_file_disables_memory(home: Path, args) -> None:
    (home / ".kin" / "settings.toml").write_text("memory_enabled = false\n")
    out = _cli(home, *args)
    assert out.returncode == 2 and out.stdout == "", out
    assert out.stderr == "kin-memory: Memory is disabled (memory_enabled = false in ~/.kin/settings.toml)\n"


def test_cli_recall_names_the_project_file_that_disables_memory(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".kin").mkdir(parents=True)
    (repo / ".kin" / "settings.toml").write_text("memory_enabled = false\n")
    for args in (("search", "gateway"), ("index-preview", "--json")):
        out = _cli(home, *args, workspace=str(repo))
        assert out.returncode == 2, out
        assert f"memory_enabled = false in {repo.resolve()}/.kin/settings.toml" in out.stderr, out.stderr
    assert _cli(home, "search", "gateway").returncode == 0  # another workspace: not disabled


def test_cli_check_keeps_working_when_memory_is_disabled(home: Path) -> None:
    (home / ".kin" / "settings.toml").write_text("memory_enabled = false\n")
    (home / ".kin" / "memory" / "facts" / "typo.md").write_text(FACT.replace("project-fact", "projct-fact"))
    out = _cli(home, "check")
    assert out.returncode == 0 and "KM201" in out.stdout, out
