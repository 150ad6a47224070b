"""Issue 14, point 10: `view` of a file over the 64 KB body cap shows the first 64 KB (whole lines) with
a note naming the file's size; it never reads the file whole. Edits of a file over the store's read
limit are refused naming the size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kin_memory.tool.commands import ToolContext, run_tool

CAP = 64 * 1024  # store.memory.BODY_CAP
SPARSE = 300 * 1024 * 1024


def run(root: Path, **inp: object):
    return run_tool(inp, ToolContext(root=root))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "store"
    r.mkdir()
    return r


def _count_reads(monkeypatch: pytest.MonkeyPatch, stop_after: int) -> list[int]:
    """Count the bytes os.read hands out; past stop_after, fail the read (so code that reads a huge file
    whole fails fast instead of filling memory)."""
    total = [0]
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        total[0] += len(chunk)
        if total[0] > stop_after:
            raise AssertionError(f"read {total[0]} bytes")
        return chunk

    monkeypatch.setattr(os, "read", counting)
    return total


def test_view_of_a_300_mb_sparse_file_reads_a_bounded_amount(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open(root / "big.md", "wb") as f:
        f.write(b"---\ncategory: episodic\n---\nstart of the body\n")
        f.truncate(SPARSE)
    # the head, plus newlines counted (never kept) over the store's 16 MB read limit at most
    total = _count_reads(monkeypatch, stop_after=16 * 1024 * 1024 + CAP + 1)
    res = run(root, command="view", path="/memories/big.md")
    assert not res.is_error, res.content
    assert total[0] <= 16 * 1024 * 1024 + CAP + 1
    assert len(res.content.encode()) < CAP + 1024
    assert "     4\tstart of the body" in res.content
    assert res.content.endswith(
        "[Only the first 64 KB of /memories/big.md are shown (lines 1-4): the file is 300 MB, and memory "
        "reads stop at 64 KB. Lines past that cannot be viewed; split or shorten the file.]"
    )


def test_view_over_the_cap_shows_whole_lines_up_to_it(root: Path) -> None:
    lines = [f"line {i:06d} " + "x" * 80 for i in range(1, 2001)]  # ~180 KB
    (root / "long.md").write_text("\n".join(lines) + "\n")
    res = run(root, command="view", path="/memories/long.md")
    assert not res.is_error
    body, note = res.content.rsplit("\n", 1)
    shown = body.split("\n")[1:]
    assert shown[0] == "     1\tline 000001 " + "x" * 80
    last = len(shown)
    assert (
        sum(len(line) + 1 for line in lines[:last]) <= CAP < sum(len(line) + 1 for line in lines[: last + 1])
    )
    assert shown[-1] == f"{last:>6}\t{lines[last - 1]}"  # a whole line, never a cut one
    assert note.startswith(
        f"[Only the first 64 KB of /memories/long.md are shown (lines 1-{last}): the file is"
    )


def test_view_range_inside_the_head_of_a_large_file(root: Path) -> None:
    (root / "long.md").write_text("".join(f"row {i}\n" for i in range(1, 30001)))  # ~230 KB
    res = run(root, command="view", path="/memories/long.md", view_range=[3, 4])
    assert not res.is_error
    assert res.content.split("\n")[1:3] == ["     3\trow 3", "     4\trow 4"]
    assert "Only the first 64 KB" in res.content


def test_view_under_the_cap_is_unchanged(root: Path) -> None:
    (root / "a.md").write_bytes(b"x" * (CAP - 1) + b"\n")
    res = run(root, command="view", path="/memories/a.md")
    assert (
        res.content
        == "Here's the content of /memories/a.md with line numbers:\n     1\t"
        + "x" * (CAP - 1)
        + "\n     2\t"
    )


def test_view_cut_inside_a_multibyte_character(root: Path) -> None:
    (root / "wide.md").write_bytes("é".encode() * CAP)  # one line, 128 KB: the cap splits a character
    res = run(root, command="view", path="/memories/wide.md")
    assert not res.is_error, res.content
    assert "é" * 100 in res.content and "\ufffd" not in res.content


def test_str_replace_on_a_file_over_the_read_limit_is_refused_naming_its_size(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open(root / "big.md", "wb") as f:
        f.write(b"needle\n")
        f.truncate(SPARSE)
    total = _count_reads(monkeypatch, stop_after=16 * 1024 * 1024 + 1)
    res = run(root, command="str_replace", path="/memories/big.md", old_str="needle", new_str="pin")
    assert res.is_error and res.content == (
        "The file /memories/big.md is 300 MB: too large to edit with the memory tool (the limit is 16 MB)."
    )
    assert total[0] == 0  # refused on its size, before a byte was read
