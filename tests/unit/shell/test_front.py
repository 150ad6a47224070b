"""The start-up front's parts: what it reads and writes on the wire, the remembered answers, the index lag."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kin_memory.lsp.startup.capabilities import initialize_answer
from kin_memory.lsp.startup.front import SETTINGS_ID, Front, ReplyScreen
from kin_memory.lsp.startup.handshake import FILE_NAME, cache_dir, handshake_key, remember, remembered
from kin_memory.lsp.wire import FdReader, Outlet, frame, next_body
from kin_memory.recall.peek import Lag
from kin_memory.store.paths import HIDDEN_DIR

# An answer this server gives (a remembered one is used only then), other than the one it would work out
# for PARAMS (UTF-16, the first encoding offered): so a test tells which one was sent.
ANSWER = initialize_answer({"capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
PARAMS = {
    "processId": None,
    "capabilities": {
        "workspace": {"configuration": True},
        "general": {"positionEncodings": ["utf-16", "utf-8"]},
    },
    "workspaceFolders": [],
}


def test_the_front_loads_no_lsp_stack() -> None:
    code = (
        "import sys, kin_memory.cli.serve, kin_memory.lsp.startup.front, kin_memory.lsp.startup.strategy, "
        "kin_memory.lsp.session; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'lsprotocol' or m == 'pygls.lsp.server'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


class Wire:
    """A front over two pipes, as an editor would see it."""

    def __init__(self, store: Path) -> None:
        self.to_server_r, self.to_server_w = os.pipe()
        self.from_server_r, self.from_server_w = os.pipe()
        self.store = store
        self.sessions: list[object] = []

    def send(self, message: dict) -> None:
        os.write(self.to_server_w, frame(message))

    def run(self, **kw):
        from kin_memory.lsp.session import Session

        def make():
            session = Session(str(self.store))
            self.sessions.append(session)
            return session

        front = Front(make, None, FdReader(self.to_server_r), Outlet(self.from_server_w), **kw)
        return front.run()

    def written(self) -> list[dict]:
        os.close(self.from_server_w)
        reader = FdReader(self.from_server_r)
        out = []
        while (body := next_body(reader)) is not None:
            out.append(json.loads(body))
        return out


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "memory"
    (root / HIDDEN_DIR).mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return root


def _kept(key: str, wait: float = 5.0) -> dict | None:
    deadline = time.monotonic() + wait
    while remembered(key) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return remembered(key)


def test_a_client_of_a_shape_not_judged_is_answered_by_pygls_and_its_answer_kept(store: Path) -> None:
    params = {**PARAMS, "capabilities": {"general": {"positionEncodings": "utf-8"}}}  # not a list
    wire = Wire(store)
    wire.send({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params})
    _, handover = wire.run()
    assert wire.written() == []
    assert not handover.answered and len(handover.received) == 1
    screen = handover.screen
    assert isinstance(screen, ReplyScreen)
    reply = frame({"jsonrpc": "2.0", "id": 7, "result": ANSWER})
    assert screen(reply) == reply  # passed on, and kept for the next start (on a thread)
    assert _kept(handshake_key(params) or "") == ANSWER


def test_the_first_start_sends_this_codes_answer_and_keeps_pygls_only_if_it_differs(store: Path) -> None:
    for sent_back, kept in (("same", False), ("other", True)):
        params = {**PARAMS, "capabilities": {"workspace": {"configuration": True}, "x": sent_back}}
        wire = Wire(store)
        wire.send({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": params})
        _, handover = wire.run()
        expected = initialize_answer(params)
        assert expected is not None and wire.written()[0] == {"jsonrpc": "2.0", "id": 3, "result": expected}
        assert handover.answered
        pygls_says = expected if sent_back == "same" else ANSWER
        screen = handover.screen
        assert screen is not None and screen(frame({"jsonrpc": "2.0", "id": 3, "result": pygls_says})) == b""
        assert (_kept(handshake_key(params) or "", 1.0 if not kept else 5.0) is not None) is kept


def test_a_remembered_answer_is_sent_and_the_settings_asked(store: Path) -> None:
    remember(handshake_key(PARAMS) or "", ANSWER)
    wire = Wire(store)
    wire.send({"jsonrpc": "2.0", "id": "a", "method": "initialize", "params": PARAMS})
    wire.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    opened = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"x": 1}}
    wire.send(opened)  # an editor may go on before it answers the settings request
    wire.send({"jsonrpc": "2.0", "id": SETTINGS_ID, "result": [{"staleDays": 12}]})
    session, handover = wire.run()
    written = wire.written()
    assert written[0] == {"jsonrpc": "2.0", "id": "a", "result": ANSWER}
    assert written[1]["method"] == "workspace/configuration" and written[1]["id"] == SETTINGS_ID
    assert len(written) == 2
    assert handover.answered and handover.pulled
    assert [json.loads(b) for b in handover.received][1:] == [
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        opened,
    ]  # the settings answer is the front's own, not passed on
    assert session.encoding == "utf-8"
    assert session.settings.stale_days == 12
    # pygls's own answer to the same request is dropped; anything else passes.
    screen = handover.screen
    assert screen is not None
    assert screen(frame({"jsonrpc": "2.0", "id": "a", "result": ANSWER})) == b""
    other = frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}})
    assert screen(other) == other


def test_anything_but_initialize_first_is_handed_over_untouched(store: Path) -> None:
    remember(handshake_key(PARAMS) or "", ANSWER)
    wire = Wire(store)
    os.write(wire.to_server_w, b"Content-Length: 5\r\n\r\nnope!")
    _, handover = wire.run()
    assert wire.written() == []
    assert handover.received == [b"nope!"] and not handover.answered


def test_a_client_that_never_sends_initialized_is_left_to_the_server(store: Path) -> None:
    remember(handshake_key(PARAMS) or "", ANSWER)
    wire = Wire(store)
    wire.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": PARAMS})
    started = time.monotonic()
    _, handover = wire.run()
    assert time.monotonic() - started < 20  # waited a bounded time (a hang guard: no input ever comes)
    written = wire.written()
    assert [m.get("id") for m in written] == [1]
    assert handover.answered and not handover.pulled and handover.check is None


def test_a_fifo_or_oversized_answer_file_is_ignored_at_once(store: Path) -> None:
    key = handshake_key(PARAMS) or ""
    kept = cache_dir() / FILE_NAME
    kept.parent.mkdir(parents=True)
    os.mkfifo(kept)
    result: list[object] = []
    reader = threading.Thread(target=lambda: result.append(remembered(key)), daemon=True)
    reader.start()
    reader.join(5)
    assert result == [None]
    kept.unlink()
    remember(key, {"capabilities": {"x": "y" * 300_000}})  # too big to keep
    assert remembered(key) is None


def test_the_index_lag_counts_what_a_sync_would_write(tmp_path: Path) -> None:
    from kin_memory.recall.index import RecallIndex
    from kin_memory.recall.records import RecallDoc

    root = tmp_path / "memory"
    root.mkdir()
    assert Lag(root).behind() is None  # no index
    index = RecallIndex(root)
    docs = [
        RecallDoc(
            vpath=f"/memories/n{i}.md",
            title=f"n{i}",
            body="b",
            category="episodic",
            workspace=None,
            scope="global",
            mtime=float(i),
            size=10 + i,
            key=100 + i,
        )  # fmt: skip
        for i in range(5)
    ]
    index.upsert(docs)
    lag = Lag(root)
    lag.add([(f"/memories/n{i}.md", 100 + i) for i in range(3)])  # unchanged
    lag.add([("/memories/n3.md", 999), ("/memories/new.md", 1)])  # changed, new
    assert lag.behind() == 3  # n3 changed, new.md new, n4 gone
    same = Lag(root)
    same.add([(f"/memories/n{i}.md", 100 + i) for i in range(5)])
    assert same.behind() == 0
