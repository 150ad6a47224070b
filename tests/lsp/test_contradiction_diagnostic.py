"""KM604 through the real server: an open buffer that disagrees with a visible memory on a value gets a
hint with related information; the same value, another workspace's memory or another subject get none.
And `kin-memory check --duplicates` reports it for the whole store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from support.memfiles import memory, write
from support.rawlsp import RawClient

WS = "/srv/repos/app"


def build(root: Path) -> None:
    write(
        root,
        "facts/queue.md",
        memory("project-fact", "# Queue broker\n\nThe queue broker listens on port 5672.\n", WS),
    )
    write(
        root,
        "facts/queue-old.md",
        memory("project-fact", "# Queue broker\n\nQueue broker port is 5673.\n", WS),
    )
    write(
        root,
        "facts/queue-same.md",
        memory("project-fact", "# Queue\n\nThe queue broker listens on port 5672 too.\n", WS),
    )
    write(
        root,
        "facts/queue-other.md",
        memory("project-fact", "The queue broker listens on port 9999.\n", "/srv/repos/other"),
    )
    write(
        root,
        "facts/mail.md",
        memory("project-fact", "# Mail relay\n\nThe mail relay listens on port 2525.\n", WS),
    )


def open_and_wait(client: RawClient, root: Path, rel: str) -> list[dict]:
    uri = (root / rel).as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "kin-memory", "version": 1,
                                                            "text": (root / rel).read_text()}})  # fmt: skip
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        found = [d for d in client.diagnostics().get(uri, []) if d.get("code") == "KM604"]
        if found:
            return found
        time.sleep(0.05)
    return []


def test_km604_on_an_open_buffer(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    build(root)
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(tmp_path)})
    client.responders["workspace/configuration"] = lambda params: [{"workspace": WS}]
    try:
        rid = client.request("initialize", {"processId": None, "rootUri": None, "workspaceFolders": [],
                                            "capabilities": {"workspace": {"configuration": True}},
                                            "initializationOptions": {"kinMemory": {"workspace": WS}}})  # fmt: skip
        client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        client.wait_checked()
        found = open_and_wait(client, root, "facts/queue-old.md")
        # A memory agreeing with the visible ones (same port) gets none, even with another workspace's 9999.
        quiet_uri = (root / "facts" / "mail.md").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": quiet_uri, "languageId": "kin-memory",
                                                                "version": 1, "text": (root / "facts" / "mail.md").read_text()}})  # fmt: skip
        time.sleep(1.5)
        mail = [d for d in client.diagnostics().get(quiet_uri, []) if d.get("code") == "KM604"]
    finally:
        client.close()
    assert len(found) == 2, found  # queue.md and queue-same.md both say 5672
    by_other = {d["relatedInformation"][0]["location"]["uri"]: d for d in found}
    d = by_other[(root / "facts" / "queue.md").as_uri()]
    assert d["severity"] == 4 and d["source"] == "kin-memory"
    assert d["message"] == "may contradict /memories/facts/queue.md: port 5673 vs 5672"
    assert d["range"]["start"]["line"] == 6 and d["relatedInformation"][0]["message"] == "states 5672"
    assert (root / "facts" / "queue-other.md").as_uri() not in by_other
    assert mail == []


def test_check_duplicates_reports_km604_for_the_store(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    build(root)
    out = subprocess.run([sys.executable, "-m", "kin_memory", "check", str(root), "--duplicates", "--format", "json",
                          "--workspace", WS], capture_output=True, text=True, env={**os.environ, "HOME": str(tmp_path)})  # fmt: skip
    rows = [r for r in json.loads(out.stdout) if r["code"] == "KM604"]
    pairs = sorted((Path(r["path"]).name, r["message"].split(": ")[0]) for r in rows)
    assert pairs == [
        ("queue-old.md", "may contradict /memories/facts/queue-same.md"),
        ("queue-old.md", "may contradict /memories/facts/queue.md"),
        ("queue-same.md", "may contradict /memories/facts/queue-old.md"),
        ("queue.md", "may contradict /memories/facts/queue-old.md"),
    ]
    plain = subprocess.run([sys.executable, "-m", "kin_memory", "check", str(root), "--format", "json", "--workspace", WS],
                           capture_output=True, text=True, env={**os.environ, "HOME": str(tmp_path)})  # fmt: skip
    assert not [r for r in json.loads(plain.stdout) if r["code"] == "KM604"]
