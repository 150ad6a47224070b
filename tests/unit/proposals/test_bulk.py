"""Bulk fixes: the store's safe fixes are one proposal whose apply changes only the fixed bytes; a moved
repository's memories are re-stamped (or made global) by one proposal."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

from kin_memory.findings.edits import apply_edits
from kin_memory.findings.model import TextEdit
from kin_memory.history.query import history_of
from kin_memory.proposals.apply import apply_proposal
from kin_memory.proposals.bulk import fix_all, restamp
from kin_memory.store.context import Context
from kin_memory.store.frontmatter import Span

FIXABLE = {  # text before → text after, one per kind of safe fix
    "casing": (
        "---\ncategory: Project-Fact\n---\nbody {n}\n",
        "---\ncategory: project-fact\n---\nbody {n}\n",
    ),
    "typo": (
        "---\r\ncategory: epsiodic\r\n---\r\nbody {n}\r\n",
        "---\r\ncategory: episodic\r\n---\r\nbody {n}\r\n",
    ),
    "fences": ("category: preference\nbody {n}\n", "---\ncategory: preference\n---\nbody {n}\n"),
    "unclosed": ("---\ncategory: session\n\nbody {n}\n", "---\ncategory: session\n---\n\nbody {n}\n"),
}
# Problems with no safe fix: a category with no clear suggestion, a missing category, a foreign stamp.
UNSAFE = ["---\ncategory: zzqqx\n---\nbody {n}\n", "---\nworkspace: global\n---\nbody {n}\n",
          "---\ncategory: project-fact\nworkspace: /gone/repo\n---\nbody {n}\n"]  # fmt: skip


def digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.md")) if ".kin-index" not in p.parts}  # fmt: skip


def test_fix_all_over_200_files_is_one_proposal_that_touches_only_the_40_fixable(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    rnd = random.Random(5)
    fixable: dict[str, str] = {}
    for n in range(200):
        rel = f"{rnd.choice(['facts', 'notes/deep', 'episodes'])}/m{n:03}.md"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if n % 5 == 0:  # 40 of 200
            kind = list(FIXABLE)[(n // 5) % 4]
            before, after = FIXABLE[kind]
            (root / rel).write_bytes(before.format(n=n).encode())
            fixable[rel] = after.format(n=n)
        elif n % 5 == 1:
            (root / rel).write_bytes(rnd.choice(UNSAFE).format(n=n).encode())
        else:
            (root / rel).write_bytes(f"---\ncategory: project-fact\n---\nfine {n}\n".encode())
    before = digest(root)
    proposal = fix_all(root, Context(root=root))
    assert proposal.source == "fix"
    assert sorted(c.path for c in proposal.changes) == sorted(f"/memories/{rel}" for rel in fixable)
    result = apply_proposal(root, proposal)
    assert result.conflicts == [] and len(result.applied) == 40
    after = digest(root)
    for rel, digest_before in before.items():
        if rel not in fixable:
            assert after[rel] == digest_before, rel  # every other byte untouched
    for rel, expected in fixable.items():
        assert (root / rel).read_bytes().decode() == expected
    assert fix_all(root, Context(root=root)).changes == ()  # nothing left to fix
    # every fixed file keeps its previous version (the proposal is a write source like any other)
    assert [v.source for v in history_of(root, f"/memories/{next(iter(fixable))}")] == [
        "proposal",
        "external",
    ]


def test_restamp_and_make_global_name_every_memory_of_the_stamp_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    moved = tmp_path / "repo-now"
    moved.mkdir()
    for n in range(3):
        (root / "facts" / f"old{n}.md").write_text(
            f"---\ncategory: project-fact\nworkspace: /gone/repo\n---\n{n}\n"
        )
    (root / "facts" / "other.md").write_text("---\ncategory: project-fact\nworkspace: /gone/other\n---\nx\n")
    proposal = restamp(root, "/gone/repo", str(moved))
    assert sorted(c.path for c in proposal.changes) == [f"/memories/facts/old{n}.md" for n in range(3)]
    assert all(f"workspace: {moved}\n" in (c.after or "") for c in proposal.changes)
    assert "Re-stamp 3 memories stamped /gone/repo" in proposal.summary
    glob = restamp(root, "/gone/other", "global")
    assert [c.after for c in glob.changes] == ["---\ncategory: project-fact\nworkspace: global\n---\nx\n"]
    assert apply_proposal(root, proposal).conflicts == []
    assert (
        root / "facts" / "old1.md"
    ).read_text() == f"---\ncategory: project-fact\nworkspace: {moved}\n---\n1\n"


def test_apply_edits_keeps_line_endings_and_drops_overlaps() -> None:
    text = "a\r\nbb\rccc\n"
    edits = [
        TextEdit(Span(1, 0, 1, 2), "BB"),
        TextEdit(Span(1, 1, 1, 2), "x"),
        TextEdit(Span(2, 3, 2, 3), "!"),
    ]
    assert apply_edits(text, edits) == "a\r\nBB\rccc!\n"
