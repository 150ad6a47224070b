"""Compacted closed files: the store keeps their listing entry and reads them whole on demand."""

from __future__ import annotations

from pathlib import Path

from kin_memory.findings.run import check_memory
from kin_memory.store.context import Context
from kin_memory.store.prompt_block import compose
from kin_memory.store.store import Store


def make(root: Path) -> None:
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "a.md").write_text(
        "---\ncategory: projcet-fact\nworkspace: /srv/a\n---\n# Alpha title\n\nbody a\n"
    )
    (root / "b.md").write_text("no frontmatter\n")
    (root / "MEMORY.md").write_text("# Index\n- [a](/memories/facts/a.md)\n")


def test_compacted_store_answers_like_the_whole_one(tmp_path: Path) -> None:
    make(tmp_path)
    whole, compact = Store(tmp_path), Store(tmp_path)
    whole.load_all()
    compact.load_all(compact=True)
    kept = compact.disk["/memories/facts/a.md"]
    assert kept.compact and kept.text == "" and kept.lines == ()
    assert kept.title == "Alpha title" and kept.category == "project-fact" and kept.stamp == "/srv/a"
    assert not compact.disk["/memories/MEMORY.md"].compact  # the index is always kept whole
    ctx = Context(root=tmp_path, active=("/srv/a",))
    index = whole.index_file()
    assert (
        compose(list(compact.memories()), index, ctx.active).text
        == compose(list(whole.memories()), index, ctx.active).text
    )
    for vpath in whole.disk:
        got = compact.get(vpath)
        assert got is not None and not got.compact
        assert got.text == whole.disk[vpath].text
        assert check_memory(got, ctx) == check_memory(whole.disk[vpath], ctx)


def test_compacted_file_changed_on_disk_is_read_again(tmp_path: Path) -> None:
    make(tmp_path)
    store = Store(tmp_path)
    store.load_all(compact=True)
    assert "body a" in store.get("/memories/facts/a.md").text
    path = tmp_path / "facts" / "a.md"
    path.write_text("---\ncategory: episodic\n---\n# New title\n\nbody changed\n")
    _, fresh = store.refresh_path(path)
    assert store.disk["/memories/facts/a.md"].compact  # stays compacted in the listing
    assert store.disk["/memories/facts/a.md"].title == "New title"
    assert "body changed" in store.get("/memories/facts/a.md").text
    path.unlink()
    store.refresh_path(path)
    assert store.get("/memories/facts/a.md") is None


def test_checking_a_compacted_store_reads_each_file_whole(tmp_path: Path) -> None:
    from kin_memory.findings.run import check_store

    make(tmp_path)
    whole, compact = Store(tmp_path), Store(tmp_path)
    whole.load_all()
    compact.load_all(compact=True)
    ctx = Context(root=tmp_path, now=1e9)
    assert check_store(compact, ctx) == check_store(whole, ctx)
    assert "KM201" in {f.code for f in check_store(compact, ctx)["/memories/facts/a.md"]}
