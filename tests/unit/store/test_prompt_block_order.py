"""The prompt block past its line cap: the lines anyone sees are the listing's first by path, whatever the
order the listing came in; the lines past the cap are counted, not made."""

from __future__ import annotations

import random
from types import SimpleNamespace

from kin_memory.findings.budget import check
from kin_memory.store.context import Context
from kin_memory.store.prompt_block import MAX_LINES, compose_from


def listing(n: int, seed: int) -> list[tuple[str, str]]:
    items = [
        (f"/memories/f{i % 7}/m{i:05}.md", f"- /memories/f{i % 7}/m{i:05}.md (episodic) — M {i}")
        for i in range(n)
    ]
    random.Random(seed).shuffle(items)
    return items


def test_a_block_past_its_cap_shows_the_first_lines_by_path_and_counts_the_rest(tmp_path) -> None:
    index = SimpleNamespace(read_error=None, lines=["# Index", "- [a](/memories/f1/m00001.md)", "tail"])
    whole = sorted(listing(5000, 0))
    shown = ["# Memory"] + [text for _, text in whole][: MAX_LINES - 1]
    for seed in (1, 2, 3):
        block = compose_from(listing(5000, seed), 4, index)  # type: ignore[arg-type]
        assert block.text.split("\n") == shown
        assert block.count == 1 + 5000 + 1 + 2 + 3  # header, listing, summary, blank + title, MEMORY.md
        # The lines past the cap are counted, not made: the first MAX_LINES of the listing are.
        assert [b.text for b in block.lines if b.source == "listing"] == [t for _, t in whole][:MAX_LINES]
        assert block.omitted == 5000 - MAX_LINES and block.truncated
        assert [b.index_line for b in block.lines[MAX_LINES:] if b.source == "index"] == [0, 1, 2]
        found = check(index, block, {v for v, _ in whole}, Context(root=tmp_path, active=(), now=0.0))  # type: ignore[arg-type]
        assert [f.code for f in found] == ["KM500"]


def test_a_block_within_its_cap_is_sorted_whole() -> None:
    block = compose_from(listing(50, 4), 0, None)
    assert [b.text for b in block.lines[1:]] == [t for _, t in sorted(listing(50, 4))]
