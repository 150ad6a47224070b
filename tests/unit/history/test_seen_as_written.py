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
    assert written_by("sync:laptop") == "by sync from laptop"
    assert written_by("sync:evil\x1b[2J\nfake line") == "by sync from evil?[2J?fake line"
    assert "\n" not in written_by("sync:" + "x" * 500) and len(written_by("sync:" + "x" * 500)) < 90
