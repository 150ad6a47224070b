"""The sync through the real server: `kin.memory.sync` asks for a remote first, brings another machine's
memories in, and a memory both machines changed in the same place gets KM800 with its quick fixes;
keeping the other machine's version writes it to disk and clears the diagnostic."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from kin_memory.gitsync import engine
from kin_memory.store.machine import rename_machine
from support.gitrepos import isolate_git
from support.memfiles import memory
from support.rawlsp import RawClient

DB = "facts/db.md"


def execute(client: RawClient, command: str, argument: dict) -> dict:
    return client.call("workspace/executeCommand", {"command": command, "arguments": [argument]}, timeout=60)


def km800(client: RawClient, uri: str, timeout: float = 15) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [d for d in client.diagnostics().get(uri, []) if d.get("code") == "KM800"]
        if found:
            return found
        time.sleep(0.05)
    return []


def test_sync_in_the_server_conflict_diagnostic_and_its_quick_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(tmp_path, monkeypatch)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    laptop, desktop = tmp_path / "laptop" / "memory", tmp_path / "desktop" / "memory"
    for root, name in ((laptop, "laptop"), (desktop, "desktop")):
        (root / "facts").mkdir(parents=True)
        rename_machine(root, name)
    (laptop / DB).write_text(
        memory("project-fact", "# Database\n\nPostgres listens on port 5432.\n", "global")
    )
    engine.sync(laptop, remote=str(remote))

    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(desktop)})
    try:
        client.initialize()
        client.notify("initialized", {})
        client.wait_checked()
        first = execute(client, "kin.memory.sync", {})["result"]
        assert first["needsRemote"] is True and "no remote" in first["summary"][0]
        came = execute(client, "kin.memory.sync", {"remote": str(remote)})["result"]
        assert [(c["path"], c["kind"], c["machine"]) for c in came["incoming"]] == [
            ("/memories/facts/db.md", "create", "laptop")
        ]
        assert "port 5432" in (desktop / DB).read_text()

        (laptop / DB).write_text((laptop / DB).read_text().replace("5432", "5433"))
        engine.sync(laptop)
        (desktop / DB).write_text((desktop / DB).read_text().replace("5432", "6543"))
        result = execute(client, "kin.memory.sync", {})["result"]
        assert [(c["path"], c["kind"], c["kept"], c["other"]) for c in result["conflicts"]] == [
            ("/memories/facts/db.md", "overlap", "desktop", "laptop")
        ]
        uri = (desktop / DB).as_uri()
        found = km800(client, uri)
        assert len(found) == 1 and found[0]["severity"] == 2 and found[0]["range"]["start"]["line"] == 0
        assert (
            found[0]["message"]
            == "changed in the same place here and on laptop (as that machine names itself): the file keeps this machine's version"
        )
        actions = client.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": found[0]["range"],
                                                          "context": {"diagnostics": found}})["result"]  # fmt: skip
        titles = {a["title"]: a["command"] for a in actions if a.get("command")}
        assert set(titles) >= {
            "Keep this machine's version",
            "Keep laptop's version",
            "Open both versions side by side",
        }
        assert titles["Open both versions side by side"]["command"] == "kinMemory.compareConflict"
        both = execute(client, "kin.memory.conflictVersions", {"uri": uri})["result"]
        assert "port 6543" in both["mine"] and "port 5433" in both["theirs"] and both["other"] == "laptop"
        keep = titles["Keep laptop's version"]
        assert execute(client, keep["command"], keep["arguments"][0])["result"] == {"ok": True}
        assert "port 5433" in (desktop / DB).read_text()
        deadline = time.monotonic() + 15
        while client.diagnostics().get(uri) and any(d["code"] == "KM800" for d in client.diagnostics()[uri]):
            assert time.monotonic() < deadline, client.diagnostics()[uri]
            time.sleep(0.05)
    finally:
        client.close()
