"""Bad input never crashes the check: each gets a diagnostic or a logged reason."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from kin_memory.findings.run import check_store
from kin_memory.store.context import Context
from kin_memory.store.store import load_store


def test_hostile_store(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "big.md").write_bytes(b"---\ncategory: preference\n---\n" + b"y" * (10 * 1024 * 1024))
    (root / "longline.md").write_text("---\ncategory: preference\n---\n" + "z" * 100_000 + "\n")
    (root / "nul.md").write_bytes(b"---\ncategory: preference\n---\na\x00b\n")
    (root / "empty.md").write_bytes(b"")
    (root / "crlf.md").write_bytes(b"---\r\ncategory: prefrence\r\n---\r\nbody\r\n")
    (root / "bomb.md").write_text(
        "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "category: preference\n---\nbody\n"
    )
    (root / "dir.md").mkdir()
    os.symlink(root / "loop-b.md", root / "loop-a.md")
    os.symlink(root / "loop-a.md", root / "loop-b.md")
    os.symlink(root, root / "sub")  # a directory symlink loop
    os.symlink("/etc/hostname", root / "escape.md")
    started = time.monotonic()
    store = load_store(root)
    results = check_store(store, Context(root=root))
    assert time.monotonic() - started < 10
    assert {f.code for f in results["/memories/big.md"]} == {"KM600"}
    assert {f.code for f in results["/memories/nul.md"]} == {"KM603"}
    assert {f.code for f in results["/memories/empty.md"]} == {"KM106"}
    crlf = results["/memories/crlf.md"]
    assert [f.code for f in crlf] == ["KM201", "KM300"] and crlf[0].span.end_col == 19
    assert {f.code for f in results["/memories/bomb.md"]} == {"KM105"}
    assert {f.code for f in results["/memories/loop-a.md"]} == {"KM900"}
    reasons = {p.vpath: p.reason for p in store.problems}
    assert "folder named like a memory file" in reasons["/memories/dir.md"]
    assert "outside the store" in reasons["/memories/escape.md"]
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "check", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert "Traceback" not in out.stderr and out.returncode == 1  # KM603 is an error


def test_vanished_store(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    store = load_store(root)
    assert check_store(store, Context(root=root)) == {}
