"""Writes the person saw as they were made (their own saves in the editor, a proposal they reviewed and
applied) are kept in history and stay out of the review queue, unless the memory already waited for
review; every source reads as words in every door."""

from __future__ import annotations

from pathlib import Path

from kin_memory.history.labels import written_by
from kin_memory.history.query import history_of
from kin_memory.history.review import changes
from kin_memory.history.sync import catch_up
from kin_memory.history.versions import capture, kept

A = b"---\ncategory: project-fact\n---\nalpha\n"


def make(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "a.md").write_bytes(A)
    catch_up(root)
    return root


def test_a_save_and_an_applied_proposal_are_kept_and_not_queued(tmp_path: Path) -> None:
    root = make(tmp_path)
    (root / "facts" / "a.md").write_bytes(A + b"saved\n")
    capture(root, ["/memories/facts/a.md"], "edit")
    with kept(root, ["/memories/facts/a.md", "/memories/facts/b.md"], "proposal"):
        (root / "facts" / "a.md").write_bytes(A + b"saved\nproposed\n")
        (root / "facts" / "b.md").write_bytes(A)
    assert [v.source for v in history_of(root, "/memories/facts/a.md")] == ["proposal", "edit", "external"]
    assert [v.source for v in history_of(root, "/memories/facts/b.md")] == ["proposal"]
    assert changes(root) == []
    catch_up(root)  # a later catch-up relabels nothing and queues nothing
    assert [v.source for v in history_of(root, "/memories/facts/a.md")] == ["proposal", "edit", "external"]
    assert changes(root) == []


def test_a_save_over_an_unreviewed_change_stays_queued(tmp_path: Path) -> None:
    root = make(tmp_path)
    (root / "facts" / "a.md").write_bytes(A + b"agent\n")
    capture(root, ["/memories/facts/a.md"], "agent")
    (root / "facts" / "a.md").write_bytes(A + b"agent\nmine\n")
    capture(root, ["/memories/facts/a.md"], "edit")
    [change] = changes(root)
    assert change.source == "edit" and "+agent\n" in change.diff and "+mine\n" in change.diff


def test_every_source_reads_as_words() -> None:
    assert written_by("agent") == "by the agent"
    assert written_by("edit") == "by you in the editor"
    assert written_by("external") == "outside the editor"
    assert written_by("proposal") == "by a reviewed proposal"
    assert written_by("sync-kept") == "by sync, this machine's side of a conflict kept"
    assert written_by("sync:laptop") == "by sync from laptop (as named by the commit)"
    assert (
        written_by("sync:evil\x1b[2J\nfake line")
        == "by sync from evil?[2J?fake line (as named by the commit)"
    )
    assert "\n" not in written_by("sync:" + "x" * 500) and len(written_by("sync:" + "x" * 500)) < 120


def test_a_memory_brought_back_keeps_its_age(tmp_path: Path) -> None:
    """Deleted when it had expired, reverted from the queue or restored from history: it comes back as
    old as it was, not "just now" (and so not fresh again)."""
    import os
    import time

    from kin_memory.history.restore import restore
    from kin_memory.history.review import revert
    from kin_memory.tool.commands import run

    root = tmp_path / "memory"
    (root / "episodes").mkdir(parents=True)
    path = root / "episodes" / "old.md"
    path.write_bytes(b"---\ncategory: episodic\n---\nlong ago\n")
    old = time.time() - 60 * 86400
    os.utime(path, (old, old))
    catch_up(root)
    run(root, None, {"command": "delete", "path": "/memories/episodes/old.md"})
    assert not path.exists()
    assert revert(root, "/memories/episodes/old.md").endswith("holds its reviewed content again.")
    assert abs(path.stat().st_mtime - old) < 1
    run(root, None, {"command": "delete", "path": "/memories/episodes/old.md"})
    kept = [v for v in history_of(root, "/memories/episodes/old.md") if not v.deleted][0]
    restore(root, "/memories/episodes/old.md", kept.version)
    assert abs(path.stat().st_mtime - old) < 1


def test_a_memory_touched_since_comes_back_with_the_later_time(tmp_path: Path) -> None:
    """Mark reviewed touches a fact without changing it: brought back, it has the touched time."""
    import os
    import time

    from kin_memory.history.review import revert
    from kin_memory.tool.review import mark_reviewed

    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    path = root / "facts" / "f.md"
    path.write_bytes(A)
    old = time.time() - 400 * 86400
    os.utime(path, (old, old))
    catch_up(root)
    mark_reviewed(root, "/memories/facts/f.md")
    touched = path.stat().st_mtime
    assert touched > old + 86400
    path.write_bytes(A + b"changed outside\n")
    catch_up(root)
    revert(root, "/memories/facts/f.md")
    assert path.read_bytes() == A and abs(path.stat().st_mtime - touched) < 1
