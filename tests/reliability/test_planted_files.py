"""Issue 14, through the real CLI and server: files a repository or an agent can plant (a project
settings file (point 4), a huge memory (point 10), the hidden folder (point 13)) never hang the product,
exhaust its memory or make it write outside the store.

Every child runs under a memory limit and a timeout, so the code before the fix fails these tests (by
MemoryError or by timing out) instead of taking the machine down.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_support import COUNTS, env_for, memory, write

MEMORY_LIMIT = 1536 * 1024 * 1024
SPARSE = 300 * 1024 * 1024


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _cli(
    args: list[str], cwd: Path, env: dict[str, str], stdin: int
) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "kin_memory", *args],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=20,
            env=env,
            cwd=str(cwd),
            preexec_fn=_limits,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"kin-memory {args[0]} hung on the planted settings file")
    return out, time.monotonic() - start


def _plant(kind: str, kin: Path) -> None:
    settings = kin / "settings.toml"
    if kind == "dev-zero":
        settings.symlink_to("/dev/zero")
    elif kind == "dev-stdin":
        settings.symlink_to("/dev/stdin")
    elif kind == "fifo":
        os.mkfifo(settings)
    elif kind == "huge":
        with open(settings, "wb") as f:
            f.truncate(SPARSE)


@pytest.mark.parametrize("kind", ["dev-zero", "dev-stdin", "fifo", "huge"])
def test_cli_check_and_tool_with_a_planted_project_settings_file(
    root: Path, home: Path, tmp_path: Path, kind: str
) -> None:
    write(root / "a.md", memory("preference", "a memory\n"))
    repo = tmp_path / "repo"
    (repo / ".kin").mkdir(parents=True)
    _plant(kind, repo / ".kin")
    env = env_for(root, home)
    silent_r, silent_w = os.pipe()  # a stdin that stays open and says nothing: /dev/stdin would block
    try:
        check, check_s = _cli(["check", "--format", "json"], repo, env, silent_r)
        tool, tool_s = _cli(
            ["tool", json.dumps({"command": "view", "path": "/memories"})], repo, env, silent_r
        )
    finally:
        os.close(silent_r)
        os.close(silent_w)
    for out in (check, tool):
        assert "MemoryError" not in out.stderr and "Traceback" not in out.stderr, out.stderr[-3000:]
    assert check_s < 5 and tool_s < 5, (check_s, tool_s)
    rows = [r for r in json.loads(check.stdout) if Path(r["path"]).name == "settings.toml"]
    assert [r["code"] for r in rows] == ["KM701"], rows
    assert "not read" in rows[0]["message"]
    assert tool.returncode == 0 and "/memories/a.md" in tool.stdout, (tool.stdout, tool.stderr)
    COUNTS["planted settings files survived"] += 1


def test_cli_view_of_a_300_mb_sparse_memory_stays_small(root: Path, home: Path) -> None:
    with open(root / "big.md", "wb") as f:
        f.write(b"---\ncategory: episodic\n---\nthe start\n")
        f.truncate(SPARSE)
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "tool", "--root", str(root), "--workspace", "none",
         json.dumps({"command": "view", "path": "/memories/big.md"})],
        capture_output=True, text=True, timeout=60, env=env_for(root, home), cwd=str(home),
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (512 * 1024 * 1024,) * 2),
    )  # fmt: skip
    elapsed = time.monotonic() - start
    assert out.returncode == 0, (out.stdout[-2000:], out.stderr[-2000:])
    assert len(out.stdout) < 70 * 1024 and "the file is 300 MB" in out.stdout
    assert elapsed < 5, elapsed
    COUNTS["oversized views capped"] += 1


def test_server_with_a_linked_hidden_folder_writes_nothing_outside(
    root: Path, home: Path, tmp_path: Path, server_factory
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".kin-index").symlink_to(elsewhere, target_is_directory=True)
    write(root / "prefs" / "tabs.md", memory("preference", "the user prefers tabs over spaces\n"))
    server = server_factory()
    server.initialize()
    created = server.tool(
        {"command": "create", "path": "/memories/new.md", "file_text": memory("preference")}
    )
    assert not created["isError"], created
    viewed = server.tool({"command": "view", "path": "/memories/prefs/tabs.md"})
    assert not viewed["isError"] and "tabs over spaces" in viewed["content"]
    search = server.command("kin.memory.search", {"query": "tabs", "workspace": "none"})
    assert search["result"]["results"] == []  # recall is off, the server answers
    preview = server.command("kin.memory.indexPreview", {"workspace": "none"})
    assert "/memories/prefs/tabs.md" in preview["result"]["text"]
    server.assert_clean_stderr()
    assert server.shutdown() == 0
    assert list(elsewhere.iterdir()) == []  # no database, no audit line, no lock, no staging
    text = server.stderr + "\n".join(server.logs())
    assert text.count("recall index off: .kin-index is a symbolic link") == 1, text[-3000:]
    COUNTS["security probes"] += 1
