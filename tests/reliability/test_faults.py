"""Fault injection against the real server and CLI: the store folder removed and recreated, a full disk
on tool writes, the server killed with SIGKILL in the middle of tool writes.

A full disk cannot be mounted without root privileges a CI runner may not have, so it is simulated
honestly with RLIMIT_FSIZE in the writing process: the kernel refuses any write past the limit with
EFBIG, exactly where ENOSPC would hit a real full disk (SIGXFSZ is ignored so the write fails instead
of the process dying).
"""

from __future__ import annotations

import hashlib
import os
import random
import resource
import shutil
import signal
import threading
import time
from pathlib import Path

from reliability_support import COUNTS, assert_matches_check, memory, tool_cli, write

FSIZE_LIMIT = 256 * 1024


def _remove_tree(path: Path) -> None:
    # The server may write its hidden index while the folder goes: retry until it is gone.
    for _ in range(100):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return
        time.sleep(0.02)
    raise AssertionError(f"could not remove {path}")


def _watcher_live(server, root: Path) -> None:
    """A barrier: files created one after another until two in a row reach the diagnostics (the first
    may have been seen by the server's own load, the second only by its file watcher)."""
    streak = 0
    for k in range(40):
        path = write(root / "barrier" / f"b{k}.md", memory("prefrence", "barrier\n", None))
        try:
            server.wait_until(lambda path=path: bool(server.codes(path)), 1.0, "barrier")
            streak += 1
        except AssertionError:
            streak = 0
        if streak == 2:
            return
    raise AssertionError("the file watcher never came up")


def test_store_removed_and_recreated_while_serving(root: Path, home: Path, server_factory) -> None:
    for i in range(20):
        write(
            root / f"d{i % 4}" / f"m{i}.md",
            memory("prefrence" if i % 2 else "preference", f"memory {i}\n", None),
        )
    server = server_factory()
    server.initialize()
    _watcher_live(server, root)
    assert "KM201" in server.codes(root / "d1" / "m1.md")
    _remove_tree(root)
    server.wait_until(
        lambda: not any(server.diagnostics.values()),
        15,
        f"diagnostics of the removed store cleared {[u for u, d in server.diagnostics.items() if d]}",
    )
    assert server.hover((root / "d1" / "m1.md").as_uri(), 1, 2)["result"] is None  # still serving
    COUNTS["faults injected (store removed)"] += 1
    time.sleep(0.3)
    root.mkdir(parents=True, exist_ok=True)
    write(root / "back" / "new.md", memory("episodc", "after the store came back\n"))
    write(root / "d1" / "m1.md", memory("sesion", "recreated\n", None))
    server.wait_until(
        lambda: (
            "KM201" in server.codes(root / "back" / "new.md")
            and "KM201" in server.codes(root / "d1" / "m1.md")
        ),
        20,
        "the recreated store picked up",
    )
    write(root / "back" / "later.md", memory("prefrence", "written after the rescan\n", None))
    server.wait_until(lambda: "KM201" in server.codes(root / "back" / "later.md"), 15, "the watch re-armed")
    assert_matches_check(server, root, home)
    COUNTS["faults injected (store recreated)"] += 1
    assert server.shutdown() == 0
    server.assert_clean_stderr()


def _disk_full() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


def test_full_disk_on_tool_writes_fails_cleanly(root: Path, home: Path) -> None:
    original = memory("project-fact", "# Notes\n\nsmall and precious\n")
    target = write(root / "facts" / "notes.md", original)
    huge = "x" * (FSIZE_LIMIT * 2)
    calls = [
        {
            "command": "str_replace",
            "path": "/memories/facts/notes.md",
            "old_str": "small and precious",
            "new_str": huge,
        },
        {"command": "insert", "path": "/memories/facts/notes.md", "insert_line": 4, "insert_text": huge},
        {"command": "create", "path": "/memories/facts/big.md", "file_text": huge},
    ]
    for call in calls:
        out = tool_cli(root, home, call, preexec=_disk_full)
        assert "Traceback" not in out.stderr, out.stderr
        assert out.returncode == 1, (call["command"], out.returncode, out.stdout, out.stderr)
        assert "failed" in out.stdout and "/memories/" in out.stdout, out.stdout
        assert str(root) not in out.stdout  # virtual paths only
        assert target.read_text(encoding="utf-8") == original  # the old file intact
        assert not (root / "facts" / "big.md").exists()
        leftovers = [p.name for p in (root / "facts").iterdir() if p.name != "notes.md"]
        assert not leftovers, leftovers  # no temp file left behind
        COUNTS["faults injected (disk full)"] += 1
    # the same small edit succeeds under the same limit: the limit, not the tool, refused the others
    ok = tool_cli(root, home, {**calls[0], "new_str": "still small"}, preexec=_disk_full)
    assert ok.returncode == 0, ok.stdout
    assert "still small" in target.read_text(encoding="utf-8")


def _version(n: int, rng: random.Random) -> str:
    body = f"v{n} " * rng.randint(10, 20_000)
    return f"---\ncategory: preference\n---\nversion {n} {len(body)} {hashlib.sha256(body.encode()).hexdigest()}\n{body}"


def _parse_version(text: str) -> int:
    """The version number of a complete file; AssertionError for a torn one."""
    head, _, rest = text.partition("\nversion ")
    assert head == "---\ncategory: preference\n---", "torn frontmatter"
    line, _, body = rest.partition("\n")
    n, length, digest = line.split(" ")
    assert len(body) == int(length) and hashlib.sha256(body.encode()).hexdigest() == digest, "torn body"
    return int(n)


def test_sigkill_of_the_server_during_tool_writes(root: Path, home: Path, server_factory) -> None:
    rng = random.Random(9)
    files = [root / "kill" / f"f{i}.md" for i in range(4)]
    current = {}
    for i, path in enumerate(files):
        current[path] = _version(i * 1000, rng)
        write(path, current[path])
    write(root / "kill" / "broken.md", memory("prefrence", "a diagnostic that must survive\n", None))
    for _round in range(3):
        server = server_factory()
        server.initialize()
        applied = [0]
        stop = threading.Event()

        def writer(path: Path, server=server, applied=applied, stop=stop) -> None:
            n = int(_parse_version(current[path]))
            while not stop.is_set():
                n += 1
                text = _version(n, rng)
                try:
                    result = server.tool(
                        {
                            "command": "str_replace",
                            "path": "/memories/kill/" + path.name,
                            "old_str": current[path],
                            "new_str": text,
                        },
                        timeout=10,
                    )
                except (AssertionError, OSError):
                    return  # killed under us
                if not result.get("isError"):
                    current[path] = text
                    applied[0] += 1

        threads = [threading.Thread(target=writer, args=(p,)) for p in files]
        for t in threads:
            t.start()
        time.sleep(0.4 + rng.random() * 0.6)
        os.kill(server.pid, signal.SIGKILL)
        stop.set()
        for t in threads:
            t.join(15)
        server.proc.wait(10)
        COUNTS["faults injected (SIGKILL during tool writes)"] += 1
        COUNTS["tool writes before SIGKILL"] += applied[0]
        for path in files:
            got = path.read_text(encoding="utf-8")
            # complete: the last acknowledged version or the one in flight, never torn or empty
            number = _parse_version(got)
            assert number >= _parse_version(current[path]), (path.name, number)
            current[path] = got
        # a write killed between its temp file and the rename leaves that temp file: hidden, never read
        names = [p.name for p in (root / "kill").iterdir()]
        visible = sorted(n for n in names if not n.startswith("."))
        assert visible == sorted([p.name for p in files] + ["broken.md"]), visible
        assert all(n.startswith(".kin-tmp-") for n in names if n.startswith(".")), names
    COUNTS["files lost"] += 0
    # a restart reads every file whole and agrees with a from-scratch check
    server = server_factory()
    server.initialize()
    assert "KM201" in server.codes(root / "kill" / "broken.md")
    assert_matches_check(server, root, home)
    assert server.shutdown() == 0
    server.assert_clean_stderr()
