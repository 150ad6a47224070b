"""Kin-Time trailers from a hostile remote (one commit each, made with raw plumbing): a time in the
future, an overflowing one, one from 1970 and one that is no number are never taken verbatim; the sync
finishes, the file's age lies inside the window its commit can explain, and a log line says so."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import hostile
import pytest
from sync_machines import DEPLOY, Machine

from kin_memory.gitsync.times import EARLIEST

CASES = {
    "year-3000": ("32503680000", "future"),
    "overflow": ("1e300", "future"),
    "year-2200": ("7258118400", "future"),
    "1970": ("1e-6", "past"),
    "negative": ("-5", "past"),
    "not-a-number": ("soon", "none"),
    "infinite": ("inf", "none"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_kin_time_outside_its_window_is_never_taken_verbatim(
    laptop: Machine, remote: Path, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    laptop.write("facts/deploy.md", DEPLOY)
    laptop.sync()
    value, side = CASES[case]
    hostile.commit(remote, {"facts/odd.md": DEPLOY.encode()},
                   trailers=(hostile.MALLORY, f'Kin-Time: {value} "facts/odd.md"'))  # fmt: skip
    before = time.time()
    with caplog.at_level(logging.WARNING, logger="kin_memory.gitsync"):
        report = laptop.sync()
    assert [c.path for c in report.incoming] == ["/memories/facts/odd.md"]
    mtime = (laptop.root / "facts" / "odd.md").stat().st_mtime
    assert EARLIEST <= mtime <= time.time() + 1
    if side == "future":
        assert mtime >= before - 120  # moved to the newest the window allows: now (or its commit's time)
    elif side == "past":
        assert mtime == EARLIEST
    else:
        assert mtime >= before - 1  # ignored: the file simply has the time it was written
    assert any("Kin-Time" in r.getMessage() and "facts/odd.md" in r.getMessage() for r in caplog.records)
