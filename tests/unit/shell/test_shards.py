"""Start-up workers stream what they check, chunk by chunk, whichever context they guessed."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from kin_memory.findings.run import check_memory
from kin_memory.lsp.startup import shards as shards_module
from kin_memory.lsp.startup.shards import Shards
from kin_memory.store.context import Context
from kin_memory.store.memory import load
from kin_memory.store.store import scan
from support.memfiles import memory, write


def build(root: Path, n: int = 40) -> None:
    for k in range(n):
        category = "preference" if k % 2 else "bogus-category"  # every other file has a finding
        write(root, f"notes/m{k:02}.md", memory(category, f"# M{k}\n\ntext {k}\n"))


@pytest.mark.parametrize("guessed", ["right", "wrong", "none"])
def test_workers_stream_chunks_and_together_cover_the_store(
    tmp_path: Path, monkeypatch, guessed: str
) -> None:
    monkeypatch.setattr(shards_module, "CHUNK", 4)  # the forked workers inherit it
    root = tmp_path / "memory"
    build(root)
    ctx = Context(root=root, now=time.time())
    guess = {"right": ctx, "wrong": dataclasses.replace(ctx, active=("/elsewhere",)), "none": None}[guessed]
    started = Shards.start(root, 2, guess)
    assert started is not None
    time.sleep(0.5)  # the workers finish their speculative check before the context arrives
    calls: list[tuple[list[str], bytes]] = []
    results = started.collect(
        ctx, "utf-16", on_frames=lambda vpaths, frames, _uris: calls.append((vpaths, frames))
    )
    assert results is not None
    streamed = [vpath for vpaths, _ in calls for vpath in vpaths]
    expected = [
        vpath
        for path, vpath, _ in scan(root)[0]
        if check_memory(load(path, vpath), ctx)  # the files with findings, checked here in-process
    ]
    assert 10 <= len(expected) < 40
    assert sorted(streamed) == sorted(expected)
    assert all(frames.count(b"Content-Length") == len(vpaths) for vpaths, frames in calls)
    assert sum(len(r.memories) for r in results) == 40
    assert len(calls) >= 4  # in chunks of a few files, not one message per worker
