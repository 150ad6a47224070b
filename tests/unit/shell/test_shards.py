"""Start-up workers stream what they check, chunk by chunk, whichever context they guessed."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from kin_memory.findings.run import check_memory
from kin_memory.lsp.startup.shards import JsonRecords, Shards
from kin_memory.lsp.startup.shards import outbox as shards_module
from kin_memory.store.context import Context
from kin_memory.store.memory import load
from kin_memory.store.store import scan
from support.memfiles import memory, write


def build(root: Path, n: int = 40) -> None:
    for k in range(n):
        category = "preference" if k % 2 else "bogus-category"  # every other file has a finding
        write(root, f"notes/m{k:02}.md", memory(category, f"# M{k}\n\ntext {k}\n"))


def start_with_an_editor_pipe(root: Path, ctx: Context) -> tuple[Shards | None, int, int]:
    """Two workers forked with a pipe as their output (they keep the output they were forked with: the
    "editor"): (the shards, the pipe's read end, its write end)."""
    import os

    r, w = os.pipe()
    saved = os.dup(1)
    os.dup2(w, 1)
    try:
        started = Shards.start(root, 2, ctx)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return started, r, w


@pytest.mark.parametrize("guessed", ["right", "wrong", "none"])
def test_workers_stream_chunks_and_together_cover_the_store(
    tmp_path: Path, monkeypatch, guessed: str
) -> None:
    monkeypatch.setattr(shards_module, "CHUNK", 4)  # the forked workers inherit it
    root = tmp_path / "memory"
    build(root)
    ctx = Context(root=root, now=time.time())
    guess = {"right": ctx, "wrong": dataclasses.replace(ctx, active=("/elsewhere",)), "none": None}[guessed]
    started = Shards.start(root, 2, guess)
    assert started is not None
    time.sleep(0.5)  # the workers finish their speculative check before the context arrives
    calls: list[tuple[list[str], bytes]] = []
    results = started.collect(
        ctx, "utf-16", on_frames=lambda vpaths, frames, _uris: calls.append((vpaths, frames))
    )
    assert results is not None
    streamed = [vpath for vpaths, _ in calls for vpath in vpaths]
    expected = [
        vpath
        for path, vpath, _ in scan(root)[0]
        if check_memory(load(path, vpath), ctx)  # the files with findings, checked here in-process
    ]
    assert 10 <= len(expected) < 40
    assert sorted(streamed) == sorted(expected)
    assert all(frames.count(b"Content-Length") == len(vpaths) for vpaths, frames in calls)
    assert sum(len(r.memories) for r in results) == 40
    assert len(calls) >= 4  # in chunks of a few files, not one message per worker


def test_workers_writing_to_the_editor_take_turns_with_the_server(tmp_path: Path) -> None:
    """With `direct`, both workers write their frames to the editor's output themselves while the server
    writes its own messages to it: every message arrives whole, none is lost, none is cut into."""
    import json
    import os
    import threading

    from kin_memory.lsp.wire import Outlet, frame

    root = tmp_path / "memory"
    build(root, 400)
    ctx = Context(root=root, now=time.time())
    started, r, w = start_with_an_editor_pipe(root, ctx)
    assert started is not None and started.token is not None
    received = bytearray()

    def read() -> None:  # a slow reader: the pipe fills and long writes go out in parts
        while chunk := os.read(r, 4096):
            received.extend(chunk)
            time.sleep(0.0005)

    reader = threading.Thread(target=read)
    reader.start()
    outlet = Outlet(w)
    outlet.share(started.token)
    said = {"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": "x" * 9000}}

    def server_writes() -> None:
        for _ in range(100):
            outlet.send(frame(said))

    writer = threading.Thread(target=server_writes)
    writer.start()
    streamed: list[bytes] = []
    results = started.collect(ctx, "utf-16", on_frames=lambda _v, frames, _u: streamed.append(frames),
                              on_records=lambda _c: None, make=False, direct=True)  # fmt: skip
    writer.join()
    outlet.alone()
    os.close(w)
    reader.join(timeout=30)
    assert results is not None and not any(streamed)  # the frames went to the editor, not through here
    methods: list[str] = []
    pos = 0
    while pos < len(received):
        stop = received.index(b"\r\n\r\n", pos)
        head = bytes(received[pos:stop])
        assert head.startswith(b"Content-Length: ")
        length = int(head[len(b"Content-Length: ") :])
        methods.append(json.loads(received[stop + 4 : stop + 4 + length])["method"])
        pos = stop + 4 + length
    assert methods.count("window/logMessage") == 100
    assert methods.count("textDocument/publishDiagnostics") == 200  # every other file has a finding


def test_a_worker_writes_back_once_the_server_has_every_answer(monkeypatch) -> None:
    """A worker done early waits for the server to close its request pipe (it does so once every
    worker has answered) before writing the findings cache, and no longer than OTHERS_WAIT."""
    import os
    import threading

    from kin_memory.lsp.startup.shards import process

    monkeypatch.setattr(process, "OTHERS_WAIT", 0.3)
    r, w = os.pipe()
    try:
        started = time.monotonic()
        process._wait_for_the_others(r)  # the server never closes it: waited for, to the cap
        assert time.monotonic() - started >= 0.3
        monkeypatch.setattr(process, "OTHERS_WAIT", 30.0)
        closing = threading.Timer(0.2, os.close, (w,))
        closing.start()
        started = time.monotonic()
        process._wait_for_the_others(r)  # closed after 0.2 s: over then, not at the cap
        waited = time.monotonic() - started
        closing.join()
        assert 0.15 <= waited < 10
    finally:
        os.close(r)


def test_every_listing_reaches_the_server_while_the_editor_has_not_read_a_diagnostic(tmp_path: Path) -> None:
    """With `direct`, a worker's frames go to the editor on a thread of their own: its summary (the
    listing MEMORY.md's diagnostics need) reaches the server while the editor has not read yet, instead
    of after its last frame was written. The editor here reads nothing until `on_summaries` is called;
    its pipe holds far less than the diagnostics."""
    import os
    import threading

    root = tmp_path / "memory"
    build(root, 1000)
    ctx = Context(root=root, now=time.time())
    started, r, w = start_with_an_editor_pipe(root, ctx)
    assert started is not None
    os.close(w)
    heard: list[tuple[int, int]] = []  # (workers' results, files listed) at each call
    listings_in = threading.Event()
    received = bytearray()

    def on_summaries(results) -> None:
        heard.append((len(results), sum(r.count() for r in results)))
        listings_in.set()

    def read() -> None:  # nothing until every listing is in (or a generous wait is over)
        listings_in.wait(20)
        heard_first = listings_in.is_set()
        while chunk := os.read(r, 1 << 16):
            received.extend(chunk)
        outcome.append(heard_first)

    outcome: list[bool] = []
    reader = threading.Thread(target=read)
    reader.start()
    results = started.collect(ctx, "utf-16", on_frames=lambda *_: None, on_records=lambda _c: None,
                              make=False, direct=True, on_summaries=on_summaries)  # fmt: skip
    started.close()
    reader.join(timeout=30)
    os.close(r)
    assert results is not None
    assert heard == [(2, 1000)]  # once, with both workers' whole listings
    assert outcome == [True]  # heard before the editor read a byte
    assert received.count(b"textDocument/publishDiagnostics") == 500  # then every diagnostic arrived


def test_the_workers_first_listing_lines_make_the_prompt_block_the_whole_listing_makes(
    tmp_path: Path,
) -> None:
    """Each worker sends its listing's first lines and their count only; merged, they make the same
    prompt block as the whole store's listing, and the workers' files are known without a set of all."""
    from kin_memory.lsp.startup.shards import KnownFiles
    from kin_memory.store.prompt_block import MAX_LINES, compose, compose_from

    root = tmp_path / "memory"
    build(root, 700)
    write(root, "MEMORY.md", "# Index\n\n- [m1](notes/m01.md)\n")
    ctx = Context(root=root, now=time.time())
    started = Shards.start(root, 2, ctx)
    assert started is not None
    results = started.collect(ctx, "utf-16", make=False)
    assert results is not None and len(results) == 2
    for r in results:
        r.shorten_listing()
        assert len(r.listed) == MAX_LINES < r.listed_count()
    merged = compose_from([item for r in results for item in r.listed], sum(r.hidden for r in results), None,
                          sum(r.listed_count() for r in results))  # fmt: skip
    memories = [load(path, vpath) for path, vpath, is_index in scan(root)[0] if not is_index]
    whole = compose(memories, None, ctx.active)
    assert (merged.text, merged.count, merged.omitted, merged.kept) == (
        whole.text,
        whole.count,
        whole.omitted,
        whole.kept,
    )
    known = KnownFiles(results)
    assert all(m.vpath in known for m in memories)
    assert "/memories/notes/m999.md" not in known and "/memories/MEMORY.md" not in known
    # A warm start: the files come named by their segments' snapshots, looked for in their own segment.
    assert started.gone.wait(30)  # the findings cache written
    again = Shards.start(root, 2, ctx)
    assert again is not None
    warm = again.collect(ctx, "utf-16", make=False)
    assert warm is not None
    assert any(isinstance(chunk, JsonRecords) for r in warm for chunk in r.records)
    known = KnownFiles(warm)
    assert all(m.vpath in known for m in memories)
    assert "/memories/notes/m999.md" not in known
