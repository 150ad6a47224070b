"""Crash in the middle: a writer process killed with SIGKILL at random points during 500 tool writes
never leaves a torn or empty file. Each version carries its own length and hash, so a torn write shows."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from kin_memory.tool.commands import ToolContext, run_tool

WRITES = 500

WRITER = textwrap.dedent("""
    import hashlib, random, sys
    from kin_memory.tool.commands import ToolContext, run_tool

    root, start = sys.argv[1], int(sys.argv[2])
    ctx = ToolContext(root=root)
    rng = random.Random(start)
    with open(root + "/crash.md", encoding="utf-8", newline="") as f:
        current = f.read()
    for n in range(start, start + 10_000):
        body = ("v%d " % n) * rng.randint(10, 40_000)
        digest = hashlib.sha256(body.encode()).hexdigest()
        text = "version %d %d %s\\n%s" % (n, len(body), digest, body)
        res = run_tool({"command": "str_replace", "path": "/memories/crash.md", "old_str": current, "new_str": text}, ctx)
        assert not res.is_error, res.content
        current = text
        sys.stdout.write("%d\\n" % n)
        sys.stdout.flush()
""")


def parse(data: bytes) -> int:
    """The version number of a complete file; AssertionError for a torn, empty or mixed one."""
    assert data, "empty file"
    head, _, body = data.partition(b"\n")
    word, n, length, digest = head.split(b" ")
    assert word == b"version"
    assert len(body) == int(length), "torn: length differs"
    assert hashlib.sha256(body).hexdigest().encode() == digest, "torn: content differs"
    return int(n)


def test_sigkill_during_500_writes_never_tears(tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    body = "seed"
    first = f"version 0 {len(body)} {hashlib.sha256(body.encode()).hexdigest()}\n{body}"
    # Written as is (a create would put a frontmatter in front, and the writer replaces the whole text)
    (root / "crash.md").write_text(first, encoding="utf-8")
    (root / "crash.md").chmod(0o600)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    rng = random.Random(20261203)
    done, last_seen, kills = 0, 0, 0
    started = time.monotonic()
    while done < WRITES and time.monotonic() - started < 60:
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(last_seen + 1)],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        target = rng.randint(1, 40)
        count = 0
        assert proc.stdout is not None
        while count < target:
            line = proc.stdout.readline()
            if not line:
                break
            count += 1
        time.sleep(rng.random() * 0.004)  # land the kill anywhere inside the next write
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        assert proc.returncode == -signal.SIGKILL or count < target, proc.returncode
        count += len(proc.stdout.read().splitlines())  # writes it finished while we slept
        version = parse((root / "crash.md").read_bytes())
        assert version in (last_seen + count, last_seen + count + 1)  # the write in flight: old or new, whole
        last_seen = version
        done += count
    assert done >= WRITES and kills >= 10, (done, kills)
    assert stat.S_IMODE((root / "crash.md").stat().st_mode) == 0o600
    # temp files a killed writer leaves are hidden: never listed, never read as memories
    listing = run_tool({"command": "view", "path": "/memories"}, ToolContext(root=root)).content
    assert listing.split("\n")[2:] == [listing.split("\n")[2]] and "kin-tmp" not in listing
    assert all(p.name.startswith(".") or p.name == "crash.md" for p in Path(root).iterdir())
