"""Issue 46: history marks a version as the file's ("now") only when the file holds exactly its bytes."""

from __future__ import annotations

from pathlib import Path

from kin_memory.history.query import current_version, history_of
from kin_memory.history.versions import keep, observe

VPATH = "/memories/facts/db.md"


def test_now_is_the_newest_version_only_while_the_file_holds_its_bytes(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    path = root / "facts" / "db.md"
    path.write_text("---\ncategory: project-fact\n---\nPort 5432.\n")
    keep(root, observe(root, [VPATH]), "tool")
    path.write_text("---\ncategory: project-fact\n---\nPort 5433.\n")
    keep(root, observe(root, [VPATH]), "edit")
    versions = history_of(root, VPATH)
    assert len(versions) == 2
    assert current_version(root, VPATH, versions) == versions[0].version
    path.write_text("---\ncategory: project-fact\n---\nPort 6543.\n")  # not kept (yet)
    assert current_version(root, VPATH, versions) is None
    path.write_text("---\ncategory: project-fact\n---\nPort 5432.\n")  # an older version's bytes
    assert current_version(root, VPATH, versions) is None
    path.unlink()
    assert current_version(root, VPATH, versions) is None
    keep(root, observe(root, [VPATH]), "tool")
    versions = history_of(root, VPATH)
    assert versions[0].deleted and current_version(root, VPATH, versions) == versions[0].version
    assert current_version(root, VPATH, []) is None
