"""A linked worktree counts as its main repository only when that repository lists it: a folder with a
hand-made `.git` file (`gitdir: .gitfake`, `.gitfake/commondir` pointing at another repository's `.git`)
is its own workspace, in the core, the command line's search, the MCP server's search and create, and
the language server's search. A
real `git worktree add` still maps to its main tree, and a FIFO planted as `.git` never blocks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.store.workspace import canonical_workspace
from support.mcp_client import git, mcp_session
from support.memfiles import memory, write
from support.rawlsp import RawClient


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A real repository whose memories an impostor folder wants to read."""
    repo = tmp_path / "victim"
    repo.mkdir()
    git(repo, "init", "-q")
    return Path(os.path.realpath(repo))


def impostor(tmp_path: Path, victim: Path) -> Path:
    fake = tmp_path / "unpacked-archive"
    (fake / ".gitfake").mkdir(parents=True)
    (fake / ".git").write_text("gitdir: .gitfake\n")
    (fake / ".gitfake" / "commondir").write_text(f"{victim / '.git'}\n")
    return Path(os.path.realpath(fake))


def test_a_hand_made_git_file_does_not_name_another_repository(tmp_path, victim):
    fake = impostor(tmp_path, victim)
    assert canonical_workspace(fake) == str(fake)
    assert canonical_workspace(fake / "sub") == str(fake)  # its own top level, not the victim


def test_a_worktree_entry_the_repository_does_not_point_back_at_is_refused(tmp_path, victim):
    entry = victim / ".git" / "worktrees" / "stolen"
    entry.mkdir(parents=True)
    (entry / "commondir").write_text("../..\n")
    (entry / "gitdir").write_text(f"{tmp_path / 'the-real-worktree' / '.git'}\n")
    fake = tmp_path / "other"
    fake.mkdir()
    (fake / ".git").write_text(f"gitdir: {entry}\n")
    assert canonical_workspace(fake) == os.path.realpath(fake)


def test_a_real_linked_worktree_maps_to_its_main_tree(tmp_path, victim):
    (victim / "README.md").write_text("x\n")
    git(victim, "add", ".")
    git(victim, "commit", "-qm", "init")
    git(victim, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature")
    assert canonical_workspace(tmp_path / "wt") == str(victim)
    (tmp_path / "wt" / "src").mkdir()
    assert canonical_workspace(tmp_path / "wt" / "src") == str(victim)  # one workspace per repository


def test_a_worktree_linked_with_relative_paths_maps_to_its_main_tree(tmp_path, victim):
    # the layout newer git writes with worktree.useRelativePaths: both pointers relative
    entry = victim / ".git" / "worktrees" / "wt"
    entry.mkdir(parents=True)
    (entry / "commondir").write_text("../..\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (entry / "gitdir").write_text(f"{os.path.relpath(wt / '.git', entry)}\n")
    (wt / ".git").write_text(f"gitdir: {os.path.relpath(entry, wt)}\n")
    assert canonical_workspace(wt) == str(victim)
    (entry / "gitdir").write_text("../../../../somewhere-else/.git\n")  # lists another folder
    assert canonical_workspace(wt) == os.path.realpath(wt)


def test_a_fifo_as_the_git_file_is_refused_without_blocking(tmp_path):
    folder = tmp_path / "fifo-repo"
    folder.mkdir()
    os.mkfifo(folder / ".git")
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from kin_memory.store.workspace import canonical_workspace as c; print(c(sys.argv[1]))", str(folder)],
        capture_output=True, text=True, timeout=20,
    )  # fmt: skip
    assert out.stdout.strip() == os.path.realpath(folder)


def test_search_and_the_mcp_server_keep_the_impostor_apart(tmp_path, victim):
    fake = impostor(tmp_path, victim)
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "memory"
    write(
        root,
        "facts/victim.md",
        memory("project-fact", "# Keys\n\nThe victim's deploy token rotates weekly.\n", str(victim)),
    )
    env = {**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "search", "deploy token rotates", "--json"],
        capture_output=True, text=True, timeout=60, env=env, cwd=str(fake),
    )  # fmt: skip
    assert json.loads(out.stdout)["results"] == []
    operator = subprocess.run(
        [sys.executable, "-m", "kin_memory", "search", "deploy token rotates", "--json", "--workspace", "none"],
        capture_output=True, text=True, timeout=60, env=env, cwd=str(fake),
    )  # fmt: skip
    assert [r["path"] for r in json.loads(operator.stdout)["results"]] == ["/memories/facts/victim.md"]
    with mcp_session(root, home, fake) as s:
        found, _ = s.call("memory_search", {"query": "deploy token rotates"})
        created, err = s.memory(command="create", path="/memories/facts/new.md", file_text="# New\n\nx\n")
    assert "victim.md" not in found
    assert not err, created
    text = (root / "facts" / "new.md").read_text()
    assert f"workspace: {fake}\n" in text and str(victim) not in text


def test_the_language_server_keeps_the_impostor_apart(tmp_path, victim):
    fake = impostor(tmp_path, victim)
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "memory"
    write(
        root, "facts/victim.md", memory("project-fact", "# Keys\n\nThe deploy token rotates.\n", str(victim))
    )
    client = RawClient.started({**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}, (fake,))
    try:
        search = {"command": "kin.memory.search", "arguments": [{"query": "deploy token rotates"}]}
        found = client.call("workspace/executeCommand", search)["result"]
        operator = dict(search, arguments=[{"query": "deploy token rotates", "workspace": "none"}])
        everyone = client.call("workspace/executeCommand", operator)["result"]
    finally:
        stderr = client.close()
    assert found["results"] == [] and found["hidden"] == 1, found
    assert [r["path"] for r in everyone["results"]] == ["/memories/facts/victim.md"]
    assert "Traceback" not in stderr
