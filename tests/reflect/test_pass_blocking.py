"""A model pass never hangs on a file it cannot read, and never holds up the language server.

A FIFO in a folder the model deletes used to be read whole to build the proposal (blocking for ever, in
the CLI and on the server's event loop); here the pass ends promptly, the FIFO is listed and left in
place, and while a pass waits on its model the server answers search, hover and the memory tool, and a
cancel (`$/cancelRequest` or the progress bar's) answers while the model still has not (the fake model
holds its reply for ten minutes, so an answer at all is the proof; the waits are hang guards, not budgets).
"""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_models import FakeModel, Reply, openai_stop, openai_tool_calls
from reflect_helpers import KEY_ENV, snapshot, write

from support.rawlsp import RawClient

DELETE_PREFS = {"command": "delete", "path": "/memories/prefs"}


def _no_reader(fifo: Path) -> bool:
    """Whether nobody holds the FIFO open for reading (a writer's non-blocking open then fails)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        return exc.errno == errno.ENXIO
    os.close(fd)
    return False


def test_cli_reflect_deleting_a_folder_with_a_fifo_ends_and_leaves_it_unread(store: Path, tmp_path: Path):
    before = snapshot(store)
    fifo = store / "prefs" / "pipe"
    os.mkfifo(fifo)  # (the snapshot helper would block on it too: taken before, and after it is gone)
    transcript = write(tmp_path / "t.md", "user: forget my preferences\n")
    with FakeModel([openai_tool_calls(DELETE_PREFS), openai_stop("Deleted the preferences.")]) as fake:
        out = subprocess.run(
            [sys.executable, "-m", "kin_memory", "reflect", str(transcript), "--root", str(store),
             "--provider", "openai", "--model", "m", "--base-url", fake.url + "/v1", "--api-key-env", KEY_ENV],
            capture_output=True, text=True, timeout=30, env={**os.environ, "HOME": str(tmp_path)},
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "--- /memories/prefs/tone.md" in out.stdout
    assert "Not read, left in place: /memories/prefs/pipe (not a regular file (a FIFO))." in out.stderr
    assert fifo.exists() and _no_reader(fifo)
    fifo.unlink()
    assert snapshot(store) == before  # a dry run writes nothing


def _start(store: Path, home: Path, fake: FakeModel, *, progress: bool = False) -> RawClient:
    """A real server whose reflection settings point at the fake model (with a progress UI if asked)."""
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(home)})
    settings = {"reflection": {"provider": "openai", "model": "local", "baseUrl": fake.url + "/v1",
                               "apiKeyEnv": KEY_ENV, "timeoutSeconds": 120}}  # fmt: skip
    client.responders["workspace/configuration"] = lambda params: [settings]
    caps = {"workspace": {"configuration": True}, "window": {"workDoneProgress": progress}}
    rid = client.request(
        "initialize", {"processId": None, "rootUri": None, "capabilities": caps, "workspaceFolders": []}
    )
    client.wait(lambda m: m.get("id") == rid)
    client.notify("initialized", {})
    client.wait_checked()
    return client


def _command(name: str, arg: dict) -> tuple[str, dict]:
    return "workspace/executeCommand", {"command": name, "arguments": [arg]}


def _stalled() -> tuple[threading.Event, Callable[[dict], Reply]]:
    """A model step that never answers while the test runs (the fake server drops it when closed), and
    an event set once the pass's request reached it."""
    asked = threading.Event()

    def stall(body: dict) -> Reply:
        asked.set()
        return Reply(200, openai_stop("too late"), sleep=600)

    return asked, stall


def test_a_folder_with_a_fifo_deleted_in_the_editor_is_proposed_and_the_server_keeps_answering(
    store: Path, tmp_path: Path
) -> None:
    fifo = store / "prefs" / "pipe"
    os.mkfifo(fifo)
    transcript = write(tmp_path / "t.md", "user: forget my preferences\n")
    with FakeModel([openai_tool_calls(DELETE_PREFS), openai_stop("Deleted.")]) as fake:
        client = _start(store, tmp_path, fake)
        try:
            rid = client.request(*_command("kin.memory.reflect", {"transcript": transcript.as_uri()}))
            search = client.call(*_command("kin.memory.search", {"query": "blue-green releases"}), 20)
            reply = client.wait(lambda m: m.get("id") == rid and "method" not in m, 30)
        finally:
            assert "Traceback" not in client.close()
    assert [r["path"] for r in search["result"]["results"]][:1] == ["/memories/facts/deploy.md"]
    proposal = reply["result"]
    assert [(c["kind"], c["path"]) for c in proposal["changes"]] == [("delete", "/memories/prefs/tone.md")]
    assert (
        "Not read, left in place: /memories/prefs/pipe (not a regular file (a FIFO))." in proposal["summary"]
    )
    assert fifo.exists() and _no_reader(fifo)


def _pass_request(name: str, tmp_path: Path) -> dict:
    if name == "kin.memory.init":
        repo = tmp_path / "repo"
        write(repo / "README.md", "# Widget\n\nWidget renders dashboards.\n")
        return {"folder": str(repo)}
    return {"transcript": write(tmp_path / "t.md", "user: remember the deploy day\n").as_uri()}


@pytest.mark.parametrize("name", ["kin.memory.reflect", "kin.memory.init", "kin.memory.consolidate"])
def test_while_a_pass_waits_search_hover_and_the_tool_answer_and_cancel_answers_at_once(
    name: str, store: Path, tmp_path: Path
) -> None:
    write(store / "facts" / "deploy-2.md", "---\ncategory: project-fact\n---\n# Deploy\n\n"
          "We deploy the billing service with blue-green releases on Fridays.\n")  # fmt: skip
    asked, stall = _stalled()
    with FakeModel([stall]) as fake:
        client = _start(store, tmp_path, fake)
        try:
            rid = client.request(*_command(name, _pass_request(name, tmp_path)))
            assert asked.wait(30), "the pass never reached the model"
            search = client.call(*_command("kin.memory.search", {"query": "blue-green releases"}), 10)
            uri = (store / "facts" / "deploy.md").as_uri()
            hover = client.call(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 2}},
                10,
            )
            tool = client.call(
                *_command("kin.memory.tool", {"command": "view", "path": "/memories/facts"}), 10
            )
            client.notify("$/cancelRequest", {"id": rid})
            reply = client.wait(lambda m: m.get("id") == rid and "method" not in m, 20)
        finally:
            assert "Traceback" not in client.close()
    assert "/memories/facts/deploy.md" in [r["path"] for r in search["result"]["results"]]
    assert "category" in hover["result"]["contents"]["value"].lower()
    assert tool["result"]["isError"] is False and "deploy.md" in tool["result"]["content"]
    assert reply["error"]["code"] == -32800, reply


def test_the_progress_bars_cancel_ends_a_waiting_pass_before_the_model_answers(
    store: Path, tmp_path: Path
) -> None:
    asked, stall = _stalled()
    with FakeModel([stall]) as fake:
        client = _start(store, tmp_path, fake, progress=True)
        try:
            rid = client.request(
                *_command("kin.memory.reflect", _pass_request("kin.memory.reflect", tmp_path))
            )
            begin = client.wait(lambda m: m.get("method") == "$/progress"
                                and str(m["params"]["token"]).startswith("kin-memory-reflect-"), 30)  # fmt: skip
            assert asked.wait(30), "the pass never reached the model"
            client.notify("window/workDoneProgress/cancel", {"token": begin["params"]["token"]})
            reply = client.wait(lambda m: m.get("id") == rid and "method" not in m, 20)
        finally:
            assert "Traceback" not in client.close()
    assert reply["error"]["message"] == "Memory reflection was cancelled; nothing was proposed."


class _Bar:
    """A progress bar whose Cancel the test presses (the server's Task, without an editor)."""

    def __init__(self) -> None:
        self.pressed = threading.Event()
        self.ended: list[str] = []

    def cancelled(self) -> bool:
        return self.pressed.is_set()

    def report(self, message: str) -> None:
        pass

    def end(self, message: str) -> None:
        self.ended.append(message)


class _Progress:
    def __init__(self, bar: _Bar) -> None:
        self.bar = bar

    async def begin(self, kind: str, title: str, *, cancellable: bool = False) -> _Bar:
        return self.bar


@pytest.mark.parametrize("how", ["cancelRequest", "progress bar"])
def test_a_cancel_answers_while_the_pass_is_stuck_in_a_call_that_never_looks_at_it(how: str) -> None:
    """The worker blocks on something that ignores the cancel flag: the command answers within a
    second all the same, the worker is abandoned (still blocked) and told to stop."""
    from kin_memory.lsp.commands.base import CommandFailed
    from kin_memory.lsp.commands.reflect import run_pass
    from kin_memory.lsp.scheduler import Scheduler

    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    flags: list[Callable[[], bool]] = []
    bar = _Bar()

    def stuck(cancelled: Callable[[], bool], report: Callable[[str], None]) -> str:
        flags.append(cancelled)
        started.set()
        release.wait(60)
        finished.set()
        return "finished late"

    scheduler = Scheduler()

    async def scenario() -> tuple[BaseException | None, bool]:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(
            run_pass(scheduler, _Progress(bar), "reflect", "Memory reflection", stuck)  # type: ignore[arg-type]
        )
        assert await loop.run_in_executor(None, started.wait, 10)
        if how == "cancelRequest":
            task.cancel()  # what pygls does on $/cancelRequest
        else:
            bar.pressed.set()
        done, _ = await asyncio.wait({task}, timeout=20)
        blocked = not finished.is_set()
        release.set()  # (asyncio.run waits for its workers when it ends)
        assert done, "the command did not answer"
        return (None if task.cancelled() else task.exception()), blocked

    try:
        error, blocked = asyncio.run(scenario())
        assert blocked  # answered while the worker was still blocked
        assert flags[0]() is True and bar.ended == ["cancelled"]
        if how == "cancelRequest":
            assert error is None  # cancelled: the editor gets RequestCancelled
        else:
            assert isinstance(error, CommandFailed)
            assert error.message == "Memory reflection was cancelled; nothing was proposed."
    finally:
        release.set()
        scheduler.shutdown()


def test_a_file_staging_cannot_copy_is_left_out_and_said(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where linking fails, staging copies through the bounded reader: a file over the memory size
    (sparse here) is not read whole, not staged, and the pass's summary names it."""
    from kin_memory.reflect import staging as staging_mod
    from kin_memory.reflect.run import Outcome
    from kin_memory.store.memory import MAX_READ_BYTES

    big = store / "facts" / "huge.md"
    big.write_bytes(b"")
    os.truncate(big, MAX_READ_BYTES + 1)

    def no_link(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "cross-device link")

    monkeypatch.setattr(staging_mod.os, "link", no_link)
    with staging_mod.Staging(store) as staging:
        assert staging.copied == 2 and "facts/huge.md" not in staging.base
        assert not (staging.dir / "facts" / "huge.md").exists() and staging.diff() == []
        unread = staging.unread
    assert unread == [("facts/huge.md", "over 16 MB (16 MB)")]
    summary = Outcome("done", unread=unread).summary
    assert (
        "did not read, so neither showed the model nor proposed: /memories/facts/huge.md (over 16 MB"
        in summary
    )
