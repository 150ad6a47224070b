"""What a sync commits and takes in is kin's decision, whatever a hostile remote (one commit each, made
with raw plumbing) puts in its tree: a `.gitignore` cannot push the hidden folder out or keep memories
in; a `.gitattributes` cannot re-encode or union-merge a memory; `..`, spellings of `.git`, links,
gitlinks and files over the memory cap are left out before anything is written or the branch moves."""

from __future__ import annotations

import subprocess
from pathlib import Path

import hostile
from sync_machines import DEPLOY, Machine, git, no_marker_anywhere

from kin_memory.gitsync.commitset import MEMORY_LIMIT
from kin_memory.gitsync.records import record_rel

FACT, VFACT = "facts/deploy.md", "/memories/facts/deploy.md"


def remote_files(remote: Path) -> dict[str, bytes]:
    out = {}
    for path, (_mode, kind, oid) in hostile.flat(remote, hostile.head(remote)).items():
        if kind == "blob":
            out[path] = subprocess.run(["git", "--git-dir", str(remote), "cat-file", "blob", oid],
                                       capture_output=True, check=True).stdout  # fmt: skip
    return out


def test_a_synced_gitignore_neither_pushes_the_hidden_folder_nor_keeps_memories_in(
    laptop: Machine, remote: Path
) -> None:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    hostile.commit(remote, {".gitignore": b"!/.kin-index/\n!.kin-index/**\n*.md\n"})
    laptop.sync()
    assert not (laptop.root / ".gitignore").exists()  # never written into the store
    (laptop.root / ".kin-index" / "secret.txt").write_text("password = hunter22\n")
    laptop.write("facts/new.md", DEPLOY.replace("Deploy", "New"))
    report = laptop.sync()
    files = remote_files(remote)
    assert not any(p.startswith(".kin-index") for p in files)
    assert "facts/new.md" in files and [c.path for c in report.outgoing] == ["/memories/facts/new.md"]
    assert ".gitignore" not in files  # this machine's commit leaves it out of the branch


def test_a_synced_gitattributes_neither_reencodes_nor_union_merges(
    laptop: Machine, desktop: Machine, remote: Path
) -> None:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    desktop.sync()
    hostile.commit(
        remote, {".gitattributes": b"*.md working-tree-encoding=UTF-16LE merge=union text eol=crlf\n"}
    )
    laptop.sync()
    desktop.sync()
    odd = DEPLOY + "odd-sized: x\n"
    laptop.write("facts/odd.md", odd)
    laptop.sync()
    assert remote_files(remote)["facts/odd.md"] == odd.encode()  # the file's bytes, not UTF-16
    desktop.sync()
    assert desktop.read("facts/odd.md") == odd
    laptop.write(FACT, DEPLOY.replace("from `main`", "from `trunk`"))
    desktop.write(FACT, DEPLOY.replace("from `main`", "from `release`"))
    laptop.sync()
    report = desktop.sync()
    assert [c.path for c in report.conflicts] == [VFACT]  # a conflict with its record, never a splice
    assert desktop.read(FACT) == DEPLOY.replace("from `main`", "from `release`")
    assert (desktop.root / record_rel(VFACT)).is_file()
    assert not no_marker_anywhere(desktop.root)


def test_bad_tree_entries_are_left_out_before_anything_is_written(
    laptop: Machine, remote: Path, tmp_path: Path
) -> None:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    sub = hostile.commit(remote, {"facts/sub.md": b"x"})
    bad = {
        "../escaped.md": b"out",
        ".GIT/config": b"[core]\n\thooksPath = /tmp\n",
        ".git./hooks/pre-push": b"#!/bin/sh\n",
        "git~1/config": b"[core]\n",
        "GIT~1/x.md": b"x",
        "facts/link.md": hostile.link(remote, "/etc/passwd"),
        "facts/gitlink.md": hostile.gitlink(sub),
        ".kin-index/machine.json": b'{"id": "00000000000000aa", "name": "mallory"}',
        "facts/fine.md": DEPLOY.encode(),
    }
    hostile.commit(remote, bad)
    report = laptop.sync()  # the first sync that sees them finishes
    assert sorted(c.path for c in report.incoming) == ["/memories/facts/fine.md", "/memories/facts/sub.md"]
    assert laptop.read("facts/fine.md") == DEPLOY
    assert not (tmp_path / "laptop" / "escaped.md").exists() and not (laptop.root / "GIT~1").exists()
    assert (
        not (laptop.root / "facts" / "link.md").exists()
        and not (laptop.root / "facts" / "gitlink.md").exists()
    )
    assert "mallory" not in (laptop.root / ".kin-index" / "machine.json").read_text()
    assert len(report.skipped) >= 6
    files = remote_files(remote)  # the clean commit went out: the remote no longer holds them either
    assert set(files) == {FACT, "facts/fine.md", "facts/sub.md"}
    assert git(laptop.root, "status", "--porcelain") == ""
    laptop.write("facts/later.md", DEPLOY)
    assert [c.path for c in laptop.sync().outgoing] == ["/memories/facts/later.md"]


def test_an_incoming_file_over_the_memory_cap_is_not_written(
    laptop: Machine, desktop: Machine, remote: Path
) -> None:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    hostile.commit(remote, {"facts/huge.md": b"\0" * (MEMORY_LIMIT + 1)})
    report = desktop.sync()
    assert not (desktop.root / "facts" / "huge.md").exists()
    assert any("/memories/facts/huge.md is over 16 MB" in s for s in report.skipped)
    assert desktop.read(FACT) == DEPLOY
    laptop.sync()
    assert not (laptop.root / "facts" / "huge.md").exists()
    assert "facts/huge.md" not in remote_files(remote)


def test_a_file_over_the_cap_here_is_not_sent(laptop: Machine, remote: Path) -> None:
    laptop.write(FACT, DEPLOY)
    (laptop.root / "facts" / "big.md").write_bytes(b"a" * (MEMORY_LIMIT + 1))
    report = laptop.sync()
    assert "facts/big.md" not in remote_files(remote)
    assert any("/memories/facts/big.md is over 16 MB" in s for s in report.skipped)


def test_a_gitattributes_inside_the_store_changes_nothing_either(laptop: Machine, desktop: Machine,
                                                                 remote: Path) -> None:  # fmt: skip
    """One written into the store itself (an agent, a person): git would read it from the working tree."""
    rules = b"*.md working-tree-encoding=UTF-16LE merge=union filter=evil text eol=crlf\n"
    for m in (laptop, desktop):
        (m.root / ".gitattributes").write_bytes(rules)
        git(m.root, "init", "-q", "-b", "main")
        git(m.root, "config", "filter.evil.clean", "sed s/main/EVIL/")
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    assert remote_files(remote)[FACT] == DEPLOY.encode()
    desktop.sync()
    laptop.write(FACT, DEPLOY.replace("from `main`", "from `trunk`"))
    desktop.write(FACT, DEPLOY.replace("from `main`", "from `release`"))
    laptop.sync()
    report = desktop.sync()
    assert [c.path for c in report.conflicts] == [VFACT]
    assert desktop.read(FACT) == DEPLOY.replace("from `main`", "from `release`")
    assert ".gitattributes" not in remote_files(remote)


def test_a_memory_replaced_by_a_link_here_is_never_sent_as_a_link(laptop: Machine, remote: Path) -> None:
    laptop.write(FACT, DEPLOY)
    laptop.sync()
    (laptop.root / FACT).unlink()
    (laptop.root / FACT).symlink_to("/etc/passwd")
    laptop.sync()
    modes = {p: e[0] for p, e in hostile.flat(remote, hostile.head(remote)).items()}
    assert all(mode.startswith("100") for mode in modes.values()), modes
