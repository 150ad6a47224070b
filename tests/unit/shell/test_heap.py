"""Giving freed memory back to the system after the startup load."""

from __future__ import annotations

import os
import sys

import pytest

from kin_memory.lsp.heap import release_freed


def resident_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resident size read from /proc")
def test_memory_freed_between_kept_objects_goes_back_to_the_system() -> None:
    blocks = [bytes(4000) + bytes([n % 256]) for n in range(60_000)]  # ~240 MB outside Python's arenas
    kept = blocks[::10]  # what a load keeps, spread through what it freed
    del blocks
    before = resident_mb()
    release_freed()
    after = resident_mb()
    assert before - after > 100, (before, after)
    assert len(kept) == 6000
