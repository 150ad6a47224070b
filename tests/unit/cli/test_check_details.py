"""A split check's shards splice a file's rows (its cache payload's JSON) into the summary's details
instead of encoding them again: the bytes must be detail_of's, whatever the names and messages hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from kin_memory.cli.check_output import cache_payload, here_now, segment_for
from kin_memory.cli.check_summary import detail_of, detail_with_rows
from kin_memory.findings.model import Finding
from kin_memory.store.root import VIRTUAL_ROOT
from kin_memory.store.span import Span

NAMES = ["/memories/a.md", '/memories/caf\u00e9/\udcff "q".md', "/memories/\u202etxt.md"]
MESSAGES = ["plain", 'caf\u00e9 \ud800 "quoted" \\ back\nslash', "\x1b[31mred\x1b[0m"]


@pytest.mark.parametrize("vpath", NAMES)
@pytest.mark.parametrize("count", [0, 1, 3])
@pytest.mark.parametrize("only_elsewhere", [False, True])
def test_spliced_details_are_the_encoded_ones(vpath: str, count: int, only_elsewhere: bool) -> None:
    root = Path("/store")
    found = [
        Finding(f"KM40{n}", Span(n, n + 1, n + 2, n + 3), MESSAGES[n % len(MESSAGES)], severity="warning")
        for n in range(count)
    ]
    age = (1.8e9 + 0.25, "episodic", 1.7e9 + 0.5)
    only = Path("/elsewhere") if only_elsewhere else None
    path = str(root) + vpath[len(VIRTUAL_ROOT) :]
    full = segment_for(path, here_now(), vpath, found, age, only, "text")
    lean = segment_for(path, here_now(), vpath, found, age, only, "text", rows=False)
    assert full is not None and lean is not None and lean.rows is None
    payload = cache_payload(None, found)
    rows_json = (payload or b"[]") if lean.severities else b"[]"
    spliced = detail_with_rows(lean.vpath, lean.severities, rows_json, lean.life)
    assert spliced == detail_of(full)
