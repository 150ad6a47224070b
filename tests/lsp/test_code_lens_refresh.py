"""Code lenses follow what they show: when an open memory changes on disk (Mark reviewed touches its
mtime; a re-stamp or a write from outside rewrites it) the server asks the client to refresh them, and
the lenses it then answers with say what is true. A client that cannot refresh is never asked."""

from __future__ import annotations

import os
import time
from pathlib import Path

from support.memfiles import memory, write
from support.rawlsp import RawClient

REFRESH = "workspace/codeLens/refresh"


def start(root: Path, home: Path, refresh: bool) -> RawClient:
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(root), "HOME": str(home)})
    caps = {"workspace": {"codeLens": {"refreshSupport": refresh}}}
    rid = client.request("initialize", {"processId": None, "rootUri": None, "capabilities": caps,
                                        "workspaceFolders": []})  # fmt: skip
    client.wait(lambda m: m.get("id") == rid)
    client.notify("initialized", {})
    client.wait_checked()
    return client


def titles(client: RawClient, uri: str) -> list[str]:
    reply = client.call("textDocument/codeLens", {"textDocument": {"uri": uri}})
    return [lens["command"]["title"] for lens in reply["result"]]


def refreshes(client: RawClient) -> int:
    with client.cond:
        return sum(1 for m in client.messages if m.get("method") == REFRESH)


def test_mark_reviewed_on_an_open_memory_refreshes_its_lens(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    text = memory("project-fact", "# Old\n\nAn old fact.\n", "global")
    path = write(root, "facts/old.md", text, age_days=400)
    uri = path.as_uri()
    client = start(root, tmp_path, refresh=True)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown",
                                                                "version": 1, "text": text}})  # fmt: skip
        stale = titles(client, uri)
        assert "Mark reviewed" in stale and "stale since" in stale[0], stale
        before = refreshes(client)
        reply = client.call(
            "workspace/executeCommand", {"command": "kin.memory.markReviewed", "arguments": [{"uri": uri}]}
        )
        assert reply.get("result") == {"ok": True}, reply
        client.wait(lambda m: m.get("method") == REFRESH and refreshes(client) > before, 5)
        fresh = titles(client, uri)
        assert "Mark reviewed" not in fresh and "in 180 days" in fresh[0], fresh
        # A write from outside to the open memory (a re-stamp does the same through the tool).
        before = refreshes(client)
        path.write_text(text.replace("global", "/somewhere/else"))
        client.wait(lambda m: m.get("method") == REFRESH and refreshes(client) > before, 5)
        # A stamp whose repository is missing: the health view's word for it, "quiet", not "other workspace".
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": path.read_text()}]})  # fmt: skip
        moved = titles(client, uri)
        assert "quiet (its repository is missing)" in moved[0] and "other workspace" not in moved[0], moved
    finally:
        assert "Traceback" not in client.close()


def test_a_client_that_cannot_refresh_is_not_asked(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    text = memory("project-fact", "# Old\n\nAn old fact.\n", "global")
    path = write(root, "facts/old.md", text, age_days=400)
    uri = path.as_uri()
    client = start(root, tmp_path, refresh=False)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown",
                                                                "version": 1, "text": text}})  # fmt: skip
        client.call(
            "workspace/executeCommand", {"command": "kin.memory.markReviewed", "arguments": [{"uri": uri}]}
        )
        path.write_text(text + "\nMore.\n")
        titles(client, uri)  # a round trip after the writes
        time.sleep(0.5)
        assert refreshes(client) == 0
    finally:
        assert "Traceback" not in client.close()
