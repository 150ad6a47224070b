"""A stamp's verdict is worked out once per check (Context.disk) and shared by every memory that carries
it: each memory's workspace findings, fixes included, are what a check of that memory alone finds, in
whatever order the memories come."""

from __future__ import annotations

import os
from pathlib import Path

from kin_memory.findings.workspace import check
from kin_memory.store.context import Context
from kin_memory.store.memory import Memory, from_text


def _memory(root: Path, n: int, category: str, stamp: str | None) -> Memory:
    head = f"category: {category}\n" + (f"workspace: {stamp}\n" if stamp is not None else "")
    text = f"---\n{head}---\n# M{n}\n\nbody\n"
    return from_text(root / f"m{n}.md", f"/memories/m{n}.md", text, 1.0, len(text))


def test_shared_verdicts_give_what_a_check_of_each_memory_alone_gives(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    repo = tmp_path / "alpha"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg").mkdir()
    other = tmp_path / "beta"
    other.mkdir()
    os.symlink(repo, tmp_path / "link")
    stamps = [
        str(repo),  # this workspace
        str(repo / "pkg"),  # KM307: a folder inside it
        str(other),  # KM303: another workspace
        str(tmp_path / "gone"),  # KM301
        str(repo) + "/",  # KM302 with a fix
        str(tmp_path / "link"),  # KM302: through a symlink
        "~/nowhere",  # KM302 without a fix
        "webapp",  # a label: KM303
        "global",
        "web  app",  # KM304
        None,  # KM300
    ]
    memories = [
        _memory(root, n, category, stamp)
        for n, (category, stamp) in enumerate(
            (c, s) for c in ("project-fact", "preference", "episodic") for s in stamps
        )
    ]
    active = (str(repo),)
    alone = [check(m, Context(root=root, active=active)) for m in memories]
    for order in (memories, memories[::-1]):
        shared = Context(root=root, active=active)
        found = {m.vpath: check(m, shared) for m in order}
        assert [found[m.vpath] for m in memories] == alone
    codes = {f.code for found in alone for f in found}
    assert {"KM300", "KM301", "KM302", "KM303", "KM304", "KM306", "KM307"} <= codes
