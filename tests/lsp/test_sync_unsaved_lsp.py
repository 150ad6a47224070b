"""A sync into a memory whose buffer has unsaved changes, through the real server: the other machine's
edit is merged into the buffer (a workspace edit), so saving keeps both sides; where the two cannot be
merged (the same line) the buffer is left alone and the save that would drop the other machine's edit
marks the memory KM800 with both versions, never a silent loss."""

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
BODY = (
    "# Database\n\nPostgres listens on port 5432.\n\nBackups run at 02:00.\n\nThe replica is in Frankfurt.\n"
)


def execute(client: RawClient, command: str, argument: dict) -> dict:
    return client.call("workspace/executeCommand", {"command": command, "arguments": [argument]}, timeout=60)


def apply_edit(text: str, edit: dict) -> str:
    """One TextEdit (line/character ranges; the server's edits start and end at line starts or the end)."""
    lines = text.splitlines(keepends=True)

    def offset(pos: dict) -> int:
        return sum(len(line) for line in lines[: pos["line"]]) + pos["character"]

    start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
    return text[:start] + edit["newText"] + text[end:]


class Buffer:
    """An editor's buffer of one memory: opened, changed without saving, edited by the server, saved."""

    def __init__(self, client: RawClient, path: Path, applies: bool = True) -> None:
        self.client, self.path, self.uri = client, path, path.as_uri()
        self.text = path.read_text()
        self.version = 1
        self.edits: list[dict] = []
        client.responders["workspace/applyEdit"] = self._apply if applies else self._refuse
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": self.uri, "languageId": "markdown", "version": 1, "text": self.text}})  # fmt: skip

    def type(self, old: str, new: str) -> None:
        assert old in self.text
        self.text = self.text.replace(old, new)
        self._changed()

    def _changed(self) -> None:
        self.version += 1
        self.client.notify("textDocument/didChange", {
            "textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [{"text": self.text}]})  # fmt: skip

    def _apply(self, params: dict) -> dict:
        self.edits.append(params)
        for change in params["edit"]["documentChanges"]:
            assert change["textDocument"]["uri"] == self.uri
            assert change["textDocument"]["version"] == self.version
            for edit in change["edits"]:
                self.text = apply_edit(self.text, edit)
        self._changed()
        return {"applied": True}

    def _refuse(self, params: dict) -> dict:
        self.edits.append(params)
        return {"applied": False}

    def save(self) -> None:
        """`:w` (answering yes to "the file has changed since reading it"): the buffer's text to disk."""
        self.path.write_text(self.text)
        self.client.notify("textDocument/didSave", {"textDocument": {"uri": self.uri}})


def km800(client: RawClient, uri: str, timeout: float = 15) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [d for d in client.diagnostics().get(uri, []) if d.get("code") == "KM800"]
        if found:
            return found
        time.sleep(0.05)
    return []


@pytest.fixture
def machines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    isolate_git(tmp_path, monkeypatch)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    laptop, desktop = tmp_path / "laptop" / "memory", tmp_path / "desktop" / "memory"
    for root, name in ((laptop, "laptop"), (desktop, "desktop")):
        (root / "facts").mkdir(parents=True)
        rename_machine(root, name)
    (laptop / DB).write_text(memory("project-fact", BODY, "global"))
    engine.sync(laptop, remote=str(remote))
    engine.sync(desktop, remote=str(remote))
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(desktop)})
    client.initialize()
    client.wait_checked()
    try:
        yield laptop, desktop, client
    finally:
        client.close()


def laptop_edits(laptop: Path, old: str, new: str) -> None:
    (laptop / DB).write_text((laptop / DB).read_text().replace(old, new))
    engine.sync(laptop)


def test_a_sync_merges_into_an_unsaved_buffer_and_the_save_keeps_both_sides(machines) -> None:
    laptop, desktop, client = machines
    buffer = Buffer(client, desktop / DB)
    buffer.type("02:00", "03:00")  # unsaved
    laptop_edits(laptop, "Frankfurt", "Dublin")
    result = execute(client, "kin.memory.sync", {})["result"]
    assert [c["path"] for c in result["incoming"]] == ["/memories/facts/db.md"]
    assert "Dublin" in (desktop / DB).read_text()
    assert len(buffer.edits) == 1, "the other machine's edit is merged into the buffer"
    assert "03:00" in buffer.text and "Dublin" in buffer.text
    assert any("unsaved" in s and "/memories/facts/db.md" in s for s in result["summary"]), result["summary"]
    buffer.save()
    time.sleep(0.5)
    assert not km800(client, buffer.uri, timeout=1.5)
    engine.sync(desktop)
    engine.sync(laptop)
    for root in (laptop, desktop):
        text = (root / DB).read_text()
        assert "03:00" in text and "Dublin" in text, (root, text)


def test_a_save_that_drops_a_synced_edit_it_never_saw_is_a_conflict(machines) -> None:
    laptop, desktop, client = machines
    buffer = Buffer(client, desktop / DB)
    buffer.type("5432", "6543")
    laptop_edits(laptop, "5432", "5433")  # the same line: the two cannot be merged
    result = execute(client, "kin.memory.sync", {})["result"]
    assert "5433" in (desktop / DB).read_text()
    assert buffer.edits == [] and "6543" in buffer.text
    assert any("unsaved" in s and "/memories/facts/db.md" in s for s in result["summary"]), result["summary"]
    buffer.save()
    found = km800(client, buffer.uri)
    assert len(found) == 1, client.diagnostics().get(buffer.uri)
    both = execute(client, "kin.memory.conflictVersions", {"uri": buffer.uri})["result"]
    assert "6543" in both["mine"] and "5433" in both["theirs"] and both["other"] == "laptop"
    assert execute(client, "kin.memory.resolveConflict", {"uri": buffer.uri, "keep": "theirs"})["result"] == {
        "ok": True
    }
    assert "5433" in (desktop / DB).read_text()


def test_an_editor_that_refuses_the_merge_still_cannot_drop_the_synced_edit(machines) -> None:
    laptop, desktop, client = machines
    buffer = Buffer(client, desktop / DB, applies=False)
    buffer.type("02:00", "03:00")
    laptop_edits(laptop, "Frankfurt", "Dublin")
    execute(client, "kin.memory.sync", {})
    assert len(buffer.edits) == 1 and "Dublin" not in buffer.text
    buffer.save()
    assert len(km800(client, buffer.uri)) == 1
    both = execute(client, "kin.memory.conflictVersions", {"uri": buffer.uri})["result"]
    assert "03:00" in both["mine"] and "Frankfurt" in both["mine"] and "Dublin" in both["theirs"]
