"""Searches the start-up front answers while the LSP stack imports (lsp/startup/early.py): only once the
check said the index is current, only while nothing that could change the answer came first, exactly
the server's answer, and everything else handed to the server in the order it came."""

from __future__ import annotations

import json
import os
import select
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from kin_memory import protocol
from kin_memory.lsp.scheduler import Scheduler
from kin_memory.lsp.session import Session
from kin_memory.lsp.startup.early import LOADING_NOTE, EarlySearch
from kin_memory.lsp.wire import FdReader, Outlet, frame, next_body
from kin_memory.recall.results import answer_search
from kin_memory.recall.service import Recall
from kin_memory.store.workspace import workspace_value
from support.memfiles import memory, write

HEAD = [
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}',
    b'{"jsonrpc":"2.0","method":"initialized"}',
]


def search(rid: object, query: str, **more: object) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": "workspace/executeCommand",
            "params": {"command": "kin.memory.search", "arguments": [{"query": query, **more}]}}  # fmt: skip


def note(method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


class Early:
    """An EarlySearch over two pipes, with the check's future and the synced flag in the test's hands."""

    def __init__(self, root: Path, before: list[dict] = ()) -> None:  # type: ignore[assignment]
        self.in_r, self.in_w = os.pipe()
        self.out_r, self.out_w = os.pipe()
        self.session = Session(str(root))
        self.check: Future = Future()
        self.check.set_running_or_notify_cancel()
        self.synced = threading.Event()
        self.received = [*HEAD, *(json.dumps(m).encode() for m in before)]
        self.reader = FdReader(self.in_r)
        self.early = EarlySearch(self.session, Scheduler(), self.reader, Outlet(self.out_w), self.received, 2,
                                 self.check, self.synced)  # fmt: skip
        self.early.start()
        self.out = FdReader(self.out_r)

    def send(self, message: dict) -> None:
        os.write(self.in_w, frame(message))

    def answer(self, timeout: float = 10.0) -> dict | None:
        if not self.out.wait(time.monotonic() + timeout):
            return None
        body = next_body(self.out)
        return json.loads(body) if body else None

    def stop(self) -> list[dict]:
        started = time.monotonic()
        left = self.early.stop()
        # a hang guard, not a budget: without its wake-up, stop would wait for input that never comes
        assert time.monotonic() - started < 10
        return [json.loads(b) for b in left]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = tmp_path / "memory"
    write(
        store, "facts/billing.md", memory("project-fact", "# Billing\n\nThe zqledger service owns billing.\n")
    )
    write(store, "notes/n1.md", memory("episodic", "# Note\n\nzqledger was slow on Tuesday.\n"))
    write(store, "notes/n2.md", memory("episodic", "# Other\n\nNothing to see.\n"))
    Recall(store).sync_disk()
    return store


def expected(e: Early, query: str, **more: object) -> dict:
    params = protocol.parse(protocol.SearchParams, {"query": query, **more})
    s = e.session
    active = s.active() if params.workspace is None else workspace_value(params.workspace)
    # The front ranks by words (the model is not loaded that early) and says so while the layer is wanted.
    note = LOADING_NOTE if s.semantic_wanted() else None
    return protocol.dump(answer_search(Recall(s.root), params, active, s.context(), s.uri_of, True, note))


def test_a_search_waits_for_the_check_and_is_answered_as_the_server_would(root: Path) -> None:
    e = Early(root, [search(1, "zqledger", workspace="none")])  # read with the settings, before the thread
    e.send(note("$/setTrace", {"value": "off"}))
    e.send(search(2, "billing", workspace="none"))
    assert e.answer(0.3) is None  # the index is not known current yet
    e.synced.set()
    first, second = e.answer(), e.answer()
    assert first is not None and second is not None
    assert first["id"] == 1 and second["id"] == 2
    assert first["result"] == expected(e, "zqledger", workspace="none")
    assert {h["path"] for h in first["result"]["results"]} == {
        "/memories/facts/billing.md",
        "/memories/notes/n1.md",
    }
    assert first["result"]["complete"] is True
    e.send(search(3, "nothing-like-it", workspace="none"))
    third = e.answer()
    assert third is not None and third["id"] == 3 and third["result"]["results"] == []
    left = e.stop()
    # The server gets the rest in order: initialize, initialized, the trace notification; no search.
    assert [m.get("method") for m in left] == ["initialize", "initialized", "$/setTrace"]


def test_a_message_that_could_change_the_answer_stops_it_and_everything_after_goes_to_the_server(
    root: Path,
) -> None:
    e = Early(root)
    e.synced.set()
    e.send(search(1, "zqledger"))
    assert e.answer() is not None
    opened = note("textDocument/didOpen", {"textDocument": {"uri": "file:///x.md", "text": "zqledger"}})
    e.send(opened)
    e.send(search(2, "zqledger"))
    tool = {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand",
            "params": {"command": "kin.memory.tool", "arguments": [{"command": "view", "path": "/memories"}]}}  # fmt: skip
    e.send(tool)
    assert e.answer(0.3) is None
    time.sleep(0.1)
    left = e.stop()
    assert [m.get("method") for m in left[2:]] == ["textDocument/didOpen"]  # read, then it stopped
    # What it did not read stays for the server, whole (in its buffer or still in the pipe).
    rest = [json.loads(next_body(e.reader) or b"null") for _ in range(2)]
    assert [m["id"] for m in rest] == [2, 3]


def test_no_answer_when_the_check_ends_without_the_index_current(root: Path) -> None:
    e = Early(root, [search(1, "zqledger")])
    e.check.set_result(None)
    time.sleep(0.1)
    assert e.answer(0.2) is None
    assert [m.get("id") for m in e.stop()] == [0, None, 1]


@pytest.mark.parametrize(
    "argument", [{"query": "zqledger", "limit": 0}, {"query": 3}, {"query": "x", "workspace": "rel/path"}]
)
def test_an_argument_the_server_refuses_is_left_to_it_with_what_follows(root: Path, argument: dict) -> None:
    e = Early(root)
    e.synced.set()
    bad = search(1, "")
    bad["params"]["arguments"] = [argument]
    e.send(bad)
    e.send(search(2, "zqledger"))
    time.sleep(0.2)
    assert e.answer(0.1) is None
    left = e.stop()
    assert [m.get("id") for m in left[2:]] == [1]
    after = next_body(e.reader)  # the search after it, unread
    assert after is not None and json.loads(after)["id"] == 2


def test_recall_disabled_is_left_to_the_server(root: Path, tmp_path: Path) -> None:
    settings = tmp_path / ".kin" / "settings.toml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("memory_enabled = false\n")
    e = Early(root)
    e.synced.set()
    e.send(search(1, "zqledger"))
    time.sleep(0.2)
    assert e.answer(0.1) is None
    assert [m.get("id") for m in e.stop()[2:]] == [1]


def test_stopping_mid_message_leaves_the_message_whole_for_the_server(root: Path) -> None:
    e = Early(root)
    e.synced.set()
    data = frame(search(1, "zqledger"))
    os.write(e.in_w, data[:25])
    time.sleep(0.1)
    assert e.stop() and not e.answer(0.1)
    os.write(e.in_w, data[25:])
    body = next_body(e.reader)
    assert body is not None and json.loads(body)["id"] == 1


def test_unframed_input_is_left_alone(root: Path) -> None:
    e = Early(root)
    e.synced.set()
    os.write(e.in_w, b"Content-Type: text/plain\r\n\r\n{}")
    e.early.thread.join(5)
    assert not e.early.thread.is_alive()  # gave up at once, without reading further
    e.stop()
    assert select.select([e.out_r], [], [], 0)[0] == []
