"""A file whose time is far in the future, before 1970, or beyond 64 signed bits of nanoseconds (a synced
commit, an unpacked archive and a hand-made `touch` can all leave one) never crashes a door: every
command of the command line, the language server's start and MCP `memory_search` answer as usual."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kin_memory.store.freshness import key_of
from support.mcp_client import mcp_session
from support.rawlsp import RawClient

FACT = "---\ncategory: project-fact\nworkspace: global\n---\n# Odd time\n\nA fact with an odd time.\n"
YEAR_3000 = 32_503_680_000  # seconds: beyond 2**63 ns (the year 2262); ext4 keeps it as 2446
TIMES = {"future": YEAR_3000 * 10**9, "before-1970": -(10**18), "epoch": 0}
DOORS = (("check",), ("search", "odd"), ("stats",), ("changes",), ("index-preview",), ("sweep",))


def test_the_freshness_key_takes_any_stat() -> None:
    base = tuple(os.stat(__file__))[:10]
    keys = set()
    for ns in (*TIMES.values(), 2**64 + 5, -(2**70) - 7):
        st = os.stat_result(base, {"st_mtime_ns": ns, "st_ctime_ns": ns})
        keys.add(key_of(st))
    assert 0 not in keys and len(keys) == 5  # each time still names its own file


def _store(tmp_path: Path, ns: int) -> tuple[Path, Path]:
    home, root = tmp_path / "home", tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    home.mkdir()
    path = root / "facts" / "odd.md"
    path.write_text(FACT)
    try:
        os.utime(path, ns=(ns, ns))
    except OverflowError:
        pytest.skip("this filesystem cannot hold the time")  # pragma: no cover - every Linux fs holds these
    return home, root


@pytest.mark.parametrize("name", sorted(TIMES))
def test_every_door_answers_over_a_file_with_an_odd_time(tmp_path: Path, name: str) -> None:
    home, root = _store(tmp_path, TIMES[name])
    env = {**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}
    for door in DOORS:
        done = subprocess.run([sys.executable, "-m", "kin_memory", *door], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert "Traceback" not in done.stderr, (door, done.stderr)
        assert done.returncode in (0, 1), (door, done.stderr)
    assert "odd.md" in subprocess.run([sys.executable, "-m", "kin_memory", "search", "odd"], env=env,
                                      cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout  # fmt: skip

    client = RawClient(env)
    try:
        client.initialize()
        client.notify("initialized", {})
        client.wait_checked()
        found = client.call("workspace/executeCommand", {"command": "kin.memory.search",
                                                         "arguments": [{"query": "odd"}]})  # fmt: skip
        assert "error" not in found, found
    finally:
        assert "Traceback" not in client.close()

    with mcp_session(root, home, tmp_path) as s:
        text, is_error = s.call("memory_search", {"query": "odd"})
    assert not is_error and "odd.md" in text
