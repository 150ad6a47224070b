"""A rename keeps links: the tool's rename (of a file or a folder) rewrites MEMORY.md's links and the
`/memories/…` references of other memories, in the same call, each file's previous version kept; a path
that only starts like the renamed one, or another memory's text, is left alone."""

from __future__ import annotations

from pathlib import Path

from kin_memory.findings.relink import moved
from kin_memory.history.query import history_of
from kin_memory.tool.commands import run

FACT = "---\ncategory: project-fact\n---\n"


def make(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "MEMORY.md").write_text(
        "# Index\n\n- [Build](facts/build.md)\n- [Deploy](/memories/facts/deploy.md)\n- [Other](facts/builder.md)\n"
    )
    (root / "facts" / "build.md").write_text(FACT + "Build with make.\n")
    (root / "facts" / "deploy.md").write_text(FACT + "Deploy after /memories/facts/build.md passes.\n")
    (root / "notes" / "why.md").write_text(
        FACT + "See /memories/facts/build.md. Not /memories/facts/builder.md.\r\n"
    )
    (root / "notes" / "plain.md").write_text(FACT + "Nothing to see.\n")
    return root


def test_renaming_a_memory_updates_memory_md_and_references_in_two_other_memories(tmp_path: Path) -> None:
    root = make(tmp_path)
    plain = (root / "notes" / "plain.md").read_bytes()
    res = run(
        root,
        None,
        {
            "command": "rename",
            "old_path": "/memories/facts/build.md",
            "new_path": "/memories/kb/build-system.md",
        },
    )
    assert res == {
        "content": "Successfully renamed /memories/facts/build.md to /memories/kb/build-system.md",
        "isError": False,
    }
    assert (root / "MEMORY.md").read_text() == (
        "# Index\n\n- [Build](kb/build-system.md)\n- [Deploy](/memories/facts/deploy.md)\n- [Other](facts/builder.md)\n"
    )
    assert (
        root / "facts" / "deploy.md"
    ).read_text() == FACT + "Deploy after /memories/kb/build-system.md passes.\n"
    assert (root / "notes" / "why.md").read_bytes() == (
        FACT + "See /memories/kb/build-system.md. Not /memories/facts/builder.md.\r\n"
    ).encode()
    assert (root / "notes" / "plain.md").read_bytes() == plain
    assert [v.source for v in history_of(root, "/memories/facts/deploy.md")] == ["tool", "external"]


def test_moving_a_folder_moves_every_reference_below_it(tmp_path: Path) -> None:
    root = make(tmp_path)
    assert not run(
        root, None, {"command": "rename", "old_path": "/memories/facts", "new_path": "/memories/kb"}
    )["isError"]
    assert (
        "- [Build](kb/build.md)\n- [Deploy](/memories/kb/deploy.md)\n- [Other](kb/builder.md)"
        in (root / "MEMORY.md").read_text()
    )
    assert (
        root / "kb" / "deploy.md"
    ).read_text() == FACT + "Deploy after /memories/kb/build.md passes.\n"  # itself moved too
    assert (
        "See /memories/kb/build.md. Not /memories/kb/builder.md." in (root / "notes" / "why.md").read_text()
    )


def test_moved_maps_whole_paths_only() -> None:
    assert moved("/memories/a.md", "/memories/a.md", "/memories/b.md") == "/memories/b.md"
    assert moved("/memories/a.mdx", "/memories/a.md", "/memories/b.md") is None
    assert moved("/memories/f/x.md", "/memories/f", "/memories/g") == "/memories/g/x.md"
    assert moved("/memories/fx/x.md", "/memories/f", "/memories/g") is None
