"""The review queue: the first catch-up marks the store reviewed; everything created, changed or deleted
since, by anyone, is queued with its diff; accept clears it; revert brings the reviewed content back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kin_memory.history.review import accept, changes, revert
from kin_memory.history.sync import catch_up
from kin_memory.tool.commands import run

A = b"---\ncategory: project-fact\n---\nalpha\n"


def make(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "a.md").write_bytes(A)
    (root / "facts" / "b.md").write_bytes(b"---\ncategory: project-fact\n---\nbeta\n")
    catch_up(root)
    return root


def test_the_first_catch_up_marks_the_existing_store_reviewed(tmp_path: Path) -> None:
    root = make(tmp_path)
    assert changes(root) == []


def test_created_changed_and_deleted_since_the_review_are_queued_with_their_diff(tmp_path: Path) -> None:
    root = make(tmp_path)
    (root / "facts" / "a.md").write_bytes(A + b"more\n")  # from outside
    run(
        root,
        None,
        {
            "command": "create",
            "path": "/memories/facts/c.md",
            "file_text": "---\ncategory: project-fact\n---\nnew\n",
        },
    )
    run(root, None, {"command": "delete", "path": "/memories/facts/b.md"})
    catch_up(root)
    queue = {c.path: c for c in changes(root)}
    assert {p: (c.kind, c.source) for p, c in queue.items()} == {
        "/memories/facts/a.md": ("changed", "external"),
        "/memories/facts/b.md": ("deleted", "tool"),
        "/memories/facts/c.md": ("created", "tool"),
    }
    assert (
        "+more\n" in queue["/memories/facts/a.md"].diff and " alpha\n" in queue["/memories/facts/a.md"].diff
    )
    assert "-beta\n" in queue["/memories/facts/b.md"].diff
    assert queue["/memories/facts/a.md"].reviewed_version is not None


def test_accept_clears_the_change_and_a_later_change_is_queued_against_the_new_mark(tmp_path: Path) -> None:
    root = make(tmp_path)
    (root / "facts" / "a.md").write_bytes(A + b"more\n")
    catch_up(root)
    assert accept(root, ["/memories/facts/a.md"]) == ["/memories/facts/a.md"]
    assert changes(root) == []
    (root / "facts" / "a.md").write_bytes(A + b"more\nand more\n")
    catch_up(root)
    [change] = changes(root)
    assert "+and more\n" in change.diff and "+more\n" not in change.diff


def test_revert_restores_the_reviewed_content_and_deletes_a_created_memory(tmp_path: Path) -> None:
    root = make(tmp_path)
    (root / "facts" / "a.md").write_bytes(b"overwritten\r\n")
    (root / "facts" / "new.md").write_bytes(A)
    catch_up(root)
    revert(root, "/memories/facts/a.md")
    revert(root, "/memories/facts/new.md")
    assert (root / "facts" / "a.md").read_bytes() == A
    assert not (root / "facts" / "new.md").exists()
    assert changes(root) == []


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kin_memory", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_the_command_line_shares_the_queue_and_the_history(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "a.md").write_bytes(A)
    assert json.loads(cli(root, "changes", "--json").stdout) == {"changes": []}  # first start: reviewed
    (root / "facts" / "a.md").write_bytes(A + b"\x1b]52;c;bad\x07more\n")
    out = json.loads(cli(root, "changes", "--json").stdout)["changes"]
    assert [(c["path"], c["kind"], c["source"]) for c in out] == [
        ("/memories/facts/a.md", "changed", "external")
    ]
    text = cli(root, "changes").stdout
    assert "\x1b" not in text and "/memories/facts/a.md" in text
    history = json.loads(cli(root, "history", "/memories/facts/a.md", "--json").stdout)["versions"]
    assert [v["source"] for v in history] == ["external", "external"]
    assert cli(root, "accept").returncode == 2  # nothing named: a usage error
    assert json.loads(cli(root, "accept", "--all", "--json").stdout) == {
        "paths": ["/memories/facts/a.md"],
        "conflicts": [],
    }
    assert json.loads(cli(root, "changes", "--json").stdout) == {"changes": []}
    done = cli(root, "restore", "/memories/facts/a.md", str(history[-1]["version"]))
    assert done.returncode == 0, done.stderr
    assert (root / "facts" / "a.md").read_bytes() == A
    assert cli(root, "restore", "/memories/facts/a.md", "99999").returncode == 2


def test_an_agents_writes_before_the_first_review_stay_in_the_queue(tmp_path: Path) -> None:
    """A store nobody has reviewed yet: the agent creates one memory and edits another before the first
    catch-up. The baseline takes what the person had, not what the agent wrote."""
    from kin_memory.agent import MemoryTool

    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "a.md").write_bytes(A)
    agent = MemoryTool(root, "none")
    agent.call(
        {"command": "str_replace", "path": "/memories/facts/a.md", "old_str": "alpha", "new_str": "omega"}
    )
    agent.call(
        {
            "command": "create",
            "path": "/memories/facts/new.md",
            "file_text": "---\ncategory: episodic\n---\nx\n",
        }
    )
    (root / "facts" / "mine.md").write_bytes(b"---\ncategory: preference\n---\nmine\n")  # the person's own
    catch_up(root)
    queued = {c.path: (c.kind, c.source) for c in changes(root)}
    assert queued == {
        "/memories/facts/a.md": ("changed", "agent"),
        "/memories/facts/new.md": ("created", "agent"),
    }
    diff = next(c.diff for c in changes(root) if c.path == "/memories/facts/a.md")
    assert "-alpha" in diff and "+omega" in diff
