"""Protocol robustness of the real server process over stdio, with a raw JSON-RPC client.

Malformed frames and messages get JSON-RPC errors where an id is known (and are dropped otherwise);
every one is followed by a request that must still succeed. No traceback reaches stderr and the user
is never shown "Error in server".
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from reliability_support import COUNTS, frame, memory, write

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


def _body(obj: object) -> bytes:
    return json.dumps(obj).encode()


def _malformed() -> list[tuple[str, bytes, tuple[object, int] | None]]:
    """(name, raw bytes, expected (id, error code) or None for "no answer")."""
    hover = {"textDocument": {"uri": "file:///x.md"}}
    too_long = _body({"jsonrpc": "2.0", "method": "x"})
    deep = b'{"jsonrpc": "2.0", "id": 89, "method": "x", "params": ' + b"[" * 1200 + b"]" * 1200 + b"}"
    return [
        ("garbage line", b"hello, this is not a header\r\n\r\n", None),
        ("garbage without a line end", b"\x00\xff\xfe random bytes", None),
        ("binary noise", bytes((i * 7919 + 13) % 251 for i in range(4096)) + b"\r\n", None),
        ("a megabyte without a line end", b"z" * (1 << 20), None),
        ("Content-Length not a number", b"Content-Length: abc\r\n\r\n{}", None),
        ("negative Content-Length", b"Content-Length: -5\r\n\r\n{}", None),
        ("Content-Length too short", b"Content-Length: 2\r\n\r\n" + too_long, (None, PARSE_ERROR)),
        (
            "Content-Length too long",
            b"Content-Length: %d\r\n\r\n" % (len(too_long) + 7) + too_long + b"garbage",
            (None, PARSE_ERROR),
        ),
        (
            "extra headers, lower case",
            b"content-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
            (None, INVALID_REQUEST),
        ),
        ("invalid JSON", b"Content-Length: 5\r\n\r\n{abc}", (None, PARSE_ERROR)),
        ("invalid UTF-8", b'Content-Length: 4\r\n\r\n"\xff\xfe"', (None, PARSE_ERROR)),
        (
            "truncated JSON",
            frame({"jsonrpc": "2.0", "id": 90, "method": "x"})[:-3] + b"   ",
            (None, PARSE_ERROR),
        ),
        ("a JSON array", frame([1, 2, 3]), (None, INVALID_REQUEST)),
        (
            "1,200 nested arrays",
            b"Content-Length: %d\r\n\r\n%s" % (len(deep), deep),
            (None, PARSE_ERROR),
        ),
        ("a JSON string", frame("hello"), (None, INVALID_REQUEST)),
        (
            "no jsonrpc member",
            frame({"id": 99, "method": "textDocument/hover", "params": hover}),
            (99, INVALID_REQUEST),
        ),
        (
            "jsonrpc 1.0",
            frame({"jsonrpc": "1.0", "id": 98, "method": "textDocument/hover", "params": hover}),
            (98, INVALID_REQUEST),
        ),
        (
            "null id",
            frame({"jsonrpc": "2.0", "id": None, "method": "textDocument/hover", "params": hover}),
            (None, INVALID_REQUEST),
        ),
        (
            "object id",
            frame({"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}),
            (None, INVALID_REQUEST),
        ),
        (
            "hover without a position",
            frame({"jsonrpc": "2.0", "id": 96, "method": "textDocument/hover", "params": hover}),
            (96, INVALID_PARAMS),
        ),
        (
            "hover params a string",
            frame({"jsonrpc": "2.0", "id": 95, "method": "textDocument/hover", "params": "x"}),
            (95, INVALID_PARAMS),
        ),
        (
            "negative position",
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 94,
                    "method": "textDocument/hover",
                    "params": {**hover, "position": {"line": -1, "character": 0}},
                }
            ),
            (94, INVALID_PARAMS),
        ),
        (
            "unknown request",
            frame({"jsonrpc": "2.0", "id": 93, "method": "kin/noSuchMethod", "params": {}}),
            (93, METHOD_NOT_FOUND),
        ),
        (
            "unknown notification",
            frame({"jsonrpc": "2.0", "method": "kin/noSuchNotification", "params": {}}),
            None,
        ),
        (
            "unknown $/ notification",
            frame({"jsonrpc": "2.0", "method": "$/somethingNew", "params": {}}),
            None,
        ),
        (
            "didOpen without a document",
            frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {}}),
            None,
        ),
        (
            "didChange of a never-opened document",
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": "file:///nowhere/x.md", "version": 3},
                        "contentChanges": [{"text": "x"}],
                    },
                }
            ),
            None,
        ),
        ("response to nothing", frame({"jsonrpc": "2.0", "id": 12345, "result": 1}), None),
        (
            "cancel of an unknown request",
            frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 777}}),
            None,
        ),
    ]


def test_malformed_messages_get_errors_and_the_server_keeps_serving(root: Path, server_factory) -> None:
    target = write(root / "prefs" / "tone.md", memory("preference", "Be brief.\n"))
    server = server_factory()
    server.initialize()
    uri = server.open(target)
    for name, data, expected in _malformed():
        server.send_raw(data)
        ok = server.hover(uri, 1, 2, timeout=10)  # the follow-up request
        assert ok.get("result") and "preference" in ok["result"]["contents"]["value"], (name, ok)
        if expected is None:
            assert not server.responses, (name, server.responses)
        else:
            msg_id, code = expected
            server.wait_until(lambda msg_id=msg_id: msg_id in server.responses, 5, f"the error for {name}")
            error = server.responses.pop(msg_id)
            assert error["error"]["code"] == code and error["id"] == msg_id, (name, error)
            assert not server.responses, (name, server.responses)
        COUNTS["malformed protocol messages"] += 1
    shown = [n for n in server.notifications if n.get("method") == "window/showMessage"]
    assert not shown, shown
    assert server.shutdown() == 0
    server.assert_clean_stderr()


def test_requests_for_unknown_documents_and_positions(root: Path, tmp_path: Path, server_factory) -> None:
    closed = write(root / "facts" / "closed.md", memory("projcet-fact", "# A\n\nOn disk only.\n"))
    outside = write(tmp_path / "elsewhere" / "x.md", memory("preference"))
    server = server_factory()
    server.initialize()
    uris = [
        closed.as_uri(),
        (root / "facts" / "missing.md").as_uri(),
        outside.as_uri(),
        (root / "notes.txt").as_uri(),
        "untitled:Untitled-1",
        "http://example.com/x.md",
        "file:///",
        "file://host/%zz%00.md",
        "::::",
    ]
    positions = [(0, 0), (1, 3), (10**9, 10**9), (2**31 - 1, 0), (0, 2**31 - 1)]
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 10**9, "character": 5}}
    for uri in uris:
        doc = {"textDocument": {"uri": uri}}
        for line, character in positions:
            pos = {"line": line, "character": character}
            for method, params in (
                ("textDocument/hover", {**doc, "position": pos}),
                ("textDocument/completion", {**doc, "position": pos}),
                (
                    "textDocument/codeAction",
                    {**doc, "range": {"start": pos, "end": pos}, "context": {"diagnostics": []}},
                ),
            ):
                response = server.request(method, params)
                assert "error" not in response, (uri, method, pos, response)
                COUNTS["requests for unknown documents or positions"] += 1
        for method, params in (
            ("textDocument/codeLens", doc),
            ("textDocument/documentSymbol", doc),
            ("textDocument/documentLink", doc),
            ("textDocument/codeAction", {**doc, "range": rng, "context": {"diagnostics": []}}),
        ):
            response = server.request(method, params)
            assert "error" not in response, (uri, method, response)
            COUNTS["requests for unknown documents or positions"] += 1
    # a file never opened is answered from disk
    hover = server.hover(closed.as_uri(), 1, 2)["result"]
    assert "category" in hover["contents"]["value"]
    actions = server.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": closed.as_uri()}, "range": rng, "context": {"diagnostics": []}},
    )["result"]
    assert any("project-fact" in a["title"] for a in actions)
    for command, args in (
        ("kin.memory.noSuchCommand", {}),
        ("kin.memory.markReviewed", {}),
        ("kin.memory.markReviewed", {"uri": outside.as_uri()}),
        ("kin.memory.tool", {"path": "/memories/x.md"}),
    ):
        response = server.command(command, args)
        assert "error" in response and response["error"]["code"] in (INVALID_PARAMS, -32603), (
            command,
            response,
        )
        COUNTS["requests for unknown documents or positions"] += 1
    assert "result" in server.command("kin.memory.list", {})
    assert server.shutdown() == 0
    server.assert_clean_stderr()


def test_huge_and_out_of_range_did_change(root: Path, server_factory) -> None:
    target = write(root / "facts" / "big.md", memory("project-fact", "small\n"))
    server = server_factory()
    server.initialize()
    uri = server.open(target)
    huge = "---\ncategory: prefrence\n---\n" + ("lorem ipsum dolor sit amet " * 40 + "\n") * 4700
    assert len(huge) > 5_000_000
    started = time.monotonic()
    server.change(uri, huge, 2)
    server.wait_until(
        lambda: {"KM201", "KM600"} <= server.codes(target), 30, "diagnostics of the 5 MB buffer"
    )
    assert time.monotonic() - started < 15
    assert "result" in server.hover(uri, 1, 12)
    # an incremental change far past the end of the buffer, and one with an inverted range
    for change in (
        {
            "range": {"start": {"line": 10**6, "character": 0}, "end": {"line": 10**6 + 1, "character": 0}},
            "text": "tail\n",
        },
        {"range": {"start": {"line": 3, "character": 5}, "end": {"line": 1, "character": 0}}, "text": "x"},
    ):
        server.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [change]}
        )
        assert "result" in server.hover(uri, 1, 12)
    server.change(uri, memory("preference", "small again\n", workspace=None), 5)
    server.wait_until(
        lambda: server.codes(target) == set(), 15, f"diagnostics cleared: {server.codes(target)}"
    )
    COUNTS["huge or out-of-range didChange"] += 3
    from reliability_support import rss_kb

    assert rss_kb(server.pid) < 400 * 1024
    assert not [n for n in server.notifications if n.get("method") == "window/showMessage"]
    assert server.shutdown() == 0
    server.assert_clean_stderr()


@pytest.mark.parametrize("how", ["close both pipes", "close stdin only", "stop reading"])
def test_client_disconnect_mid_request(root: Path, server_factory, how: str) -> None:
    for i in range(300):
        write(root / f"d{i % 10}" / f"m{i}.md", memory("prefrence", f"memory {i} " * 50 + "\n"))
    server = server_factory()
    server.initialize()
    uri = server.open(root / "d0" / "m0.md")
    for _ in range(50):
        server.request_async(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 2}}
        )
    server.request_async("workspace/executeCommand", {"command": "kin.memory.list", "arguments": [{}]})
    if how == "stop reading":
        # the client hangs without reading while the server keeps producing output, then goes away
        server.notify("workspace/didChangeConfiguration", {"settings": {"kinMemory": {"staleDays": 1}}})
        time.sleep(0.5)
    server.proc.stdin.close()
    if how != "close stdin only":
        os.close(server.proc.stdout.fileno())
    try:
        rc = server.proc.wait(20)
    except Exception:  # noqa: BLE001
        server.kill()
        raise AssertionError(
            f"server did not exit after the client went away ({how})\n{server.stderr}"
        ) from None
    COUNTS["client disconnects"] += 1
    time.sleep(0.2)
    assert rc == 0, (rc, server.stderr[-3000:])
    server.assert_clean_stderr()
