from __future__ import annotations

import io
import json

import pytest

from kin_memory.cli import UsageError, main
from kin_memory.cli import tool as cli
from kin_memory.store.home import home_relative


def test_tool_subcommand_create_and_view(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "store"
    root.mkdir()
    rc = main(
        [
            "tool",
            "--root",
            str(root),
            "--workspace",
            "none",
            json.dumps({"command": "create", "path": "/memories/a.md", "file_text": "hi"}),
        ]
    )
    assert rc == 0
    assert capsys.readouterr().out == (
        "File created successfully at: /memories/a.md. The store added 3 lines of frontmatter "
        "(`category: episodic`) above your text, so your first line is now line 4.\n"
    )
    assert (root / "a.md").read_text() == "---\ncategory: episodic\n---\nhi"
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"command": "view", "path": "/memories/nope"})))
    rc = main(["tool", "--root", str(root), "--workspace", "none", "-"])
    assert rc == 1
    assert capsys.readouterr().out == "The path /memories/nope does not exist. Please provide a valid path.\n"


def test_tool_invalid_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["tool", "--root", str(tmp_path), "{nope"]) == 2
    assert "JSON" in capsys.readouterr().err


def test_handler_raises_usage_error(tmp_path):
    import argparse

    with pytest.raises(UsageError):
        cli.handler(argparse.Namespace(json="[1]", root=str(tmp_path), workspace="none"))


def test_tool_disabled_by_workspace_settings(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ws = tmp_path / "ws"
    (ws / ".kin").mkdir(parents=True)
    (ws / ".kin" / "settings.toml").write_text("memory_enabled = false\n")
    rc = main(
        [
            "tool",
            "--root",
            str(tmp_path / "store"),
            "--workspace",
            str(ws),
            json.dumps({"command": "view", "path": "/memories"}),
        ]
    )
    assert rc == 1
    out = capsys.readouterr().out
    assert out.startswith("Memory is disabled (memory_enabled = false in ") and "settings.toml" in out


def test_create_from_a_linked_worktree_stamps_the_main_tree(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    main_tree = tmp_path / "repo"
    gitdir = main_tree / ".git" / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n")
    (gitdir / "gitdir").write_text(f"{worktree / '.git'}\n")  # the repository lists it back, as git does
    root = tmp_path / "store"
    for rel, text in (
        ("f.md", "---\ncategory: project-fact\n---\nx\n"),
        ("p.md", "---\ncategory: preference\n---\nx\n"),
        ("e.md", "plain\n"),
        ("g.md", "---\ncategory: episodic\nworkspace: global\n---\nx\n"),
    ):
        assert (
            main(
                [
                    "tool",
                    "--root",
                    str(root),
                    "--workspace",
                    str(worktree),
                    json.dumps({"command": "create", "path": f"/memories/{rel}", "file_text": text}),
                ]
            )
            == 0
        )
    real = str(main_tree.resolve())
    assert (root / "f.md").read_text() == f"---\ncategory: project-fact\nworkspace: {real}\n---\nx\n"
    assert (root / "p.md").read_text() == "---\ncategory: preference\n---\nx\n"
    assert (root / "e.md").read_text() == f"---\ncategory: episodic\nworkspace: {real}\n---\nplain\n"
    assert (root / "g.md").read_text() == "---\ncategory: episodic\nworkspace: global\n---\nx\n"
    capsys.readouterr()


def test_settings_label_hides_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert home_relative(tmp_path / ".kin" / "settings.toml") == "~/.kin/settings.toml"
    assert home_relative("/etc/kin/settings.toml") == "/etc/kin/settings.toml"
    assert home_relative(None) is None
