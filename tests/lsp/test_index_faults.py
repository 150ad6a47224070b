"""Faults of the recall index while the real server runs: deleted, overwritten with garbage, truncated,
locked by another process, and the server killed in the middle of a reindex. The index is a cache:
each time the server keeps serving and the index comes back whole."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.memfiles import memory, write
from support.rawlsp import RawClient

DB = Path(".kin-index") / "recall.sqlite3"


def make_store(root: Path, n: int = 40) -> None:
    for i in range(n):
        write(
            root,
            f"notes/n{i:04}.md",
            memory("project-fact", f"# Note {i}\n\nroutine text number{i} about the harbour\n", "global"),
        )
    write(
        root,
        "facts/kraken.md",
        memory("project-fact", "# Kraken\n\nThe kraken service stores invoices.\n", "global"),
    )


def start(root: Path, home: Path) -> RawClient:
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(home)})
    client.initialize()
    client.wait(
        lambda m: m.get("method") == "window/logMessage" and "recall index:" in m["params"]["message"], 60
    )
    return client


def search(client: RawClient, query: str, timeout: float = 30.0) -> list[str]:
    reply = client.call(
        "workspace/executeCommand", {"command": "kin.memory.search", "arguments": [{"query": query}]}, timeout
    )
    assert "error" not in reply, reply
    return [r["path"] for r in reply["result"]["results"]]


def eventually_found(client: RawClient, query: str, path: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path in search(client, query):
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} never came back in the index")


@pytest.mark.parametrize("fault", ["delete", "garbage", "truncate"])
def test_index_damaged_while_running_is_refilled(tmp_path: Path, fault: str) -> None:
    root = tmp_path / "memory"
    make_store(root)
    client = start(root, tmp_path)
    try:
        assert search(client, "kraken invoices")[0] == "/memories/facts/kraken.md"
        db = root / DB
        if fault == "delete":
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        elif fault == "garbage":
            with open(db, "r+b") as f:
                f.write(os.urandom(db.stat().st_size))
        else:
            with open(db, "r+b") as f:
                f.truncate(2048)
        # an edit reaches the writer, which finds the damage; the server refills the index from the store
        write(
            root,
            "facts/new.md",
            memory("project-fact", "# Walrus\n\nThe walrus queue drains nightly.\n", "global"),
        )
        eventually_found(client, "walrus queue", "/memories/facts/new.md")
        eventually_found(client, "kraken invoices", "/memories/facts/kraken.md")
        assert client.proc.poll() is None
    finally:
        stderr = client.close()
    assert "Traceback" not in stderr


HOLD_LOCK = """
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()  # held until the test says so
c.execute("COMMIT")
"""


def test_index_locked_by_another_process(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    make_store(root)
    client = start(root, tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(root / DB)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        slow = client.request(
            "workspace/executeCommand", {"command": "kin.memory.search", "arguments": [{"query": "kraken"}]}
        )
        # meanwhile the server keeps answering: the lock is held until the listing is answered, so a
        # loop blocked by the search (rather than a worker thread) would never answer it
        listing = client.call(
            "workspace/executeCommand", {"command": "kin.memory.list", "arguments": [{}]}, 20
        )
        assert len(listing["result"]["memories"]) == 41
        holder.stdin.write("release\n")
        holder.stdin.flush()
        reply = client.wait(lambda m: m.get("id") == slow, 20)
        assert "error" not in reply
        holder.wait(10)
        assert search(client, "kraken invoices")[0] == "/memories/facts/kraken.md"
    finally:
        holder.kill()
        stderr = client.close()
    assert "Traceback" not in stderr


def test_killed_during_reindex_then_restart(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    make_store(root, n=3000)
    client = start(root, tmp_path)
    client.request("workspace/executeCommand", {"command": "kin.memory.reindex", "arguments": [{}]})
    time.sleep(0.3)  # in the middle of it: 3,000 files take a few seconds
    os.kill(client.proc.pid, signal.SIGKILL)
    client.proc.wait(10)
    with sqlite3.connect(root / DB) as c:  # whatever the kill left is a consistent database (WAL)
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    again = start(root, tmp_path)
    try:
        assert search(again, "kraken invoices")[0] == "/memories/facts/kraken.md"
        assert "/memories/notes/n2999.md" in search(again, "number2999 harbour")
        stats = again.call("workspace/executeCommand", {"command": "kin.memory.list", "arguments": [{}]})
        assert len(stats["result"]["memories"]) == 3001
    finally:
        stderr = again.close()
    assert "Traceback" not in stderr
