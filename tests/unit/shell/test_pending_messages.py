"""How messages waiting to be served are coalesced and ordered (the transport's `_Pending`)."""

from __future__ import annotations

import json

from kin_memory.lsp.transport import _Pending, _Reply


def change(uri: str, text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange",
                       "params": {"textDocument": {"uri": uri, "version": 1}, "contentChanges": [{"text": text}]}}).encode()  # fmt: skip


def hover(uri: str, msg_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover",
                       "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}}).encode()  # fmt: skip


def did_open(uri: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                       "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": ""}}}).encode()  # fmt: skip


def served(*items: bytes | None) -> list[bytes | None]:
    pending = _Pending()
    for item in items:
        pending.add(item)
    out = []
    while pending:
        out.append(pending.pop())
    return out


def test_a_later_full_change_replaces_an_earlier_one_nothing_saw() -> None:
    a1, a2, b1 = change("a", "1"), change("a", "2"), change("b", "1")
    assert served(a1, b1, a2) == [b1, a2]


def test_a_change_a_request_saw_is_kept() -> None:
    a1, h, a2 = change("a", "1"), hover("a", 1), change("a", "2")
    assert served(a1, h, a2) == [a1, h, a2]


def test_a_hover_goes_ahead_of_other_documents_edits_taking_its_own_along() -> None:
    a1, b1, c1, h = change("a", "1"), change("b", "1"), change("c", "1"), hover("b", 7)
    assert served(a1, b1, c1, h) == [b1, h, a1, c1]
    assert served(a1, c1, hover("z", 8)) == [hover("z", 8), a1, c1]
    # its own document's edits keep their order (here: incremental ones, which are never merged)
    b_part1 = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": "b", "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                            "text": "x"}]}}).encode()  # fmt: skip
    b_part2 = b_part1.replace(b'"text": "x"', b'"text": "y"')
    assert served(a1, b_part1, c1, b_part2, h) == [b_part1, b_part2, h, a1, c1]


def test_nothing_passes_an_open_a_reply_or_a_message_about_no_document() -> None:
    opened, config = (
        did_open("b"),
        json.dumps({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {}}).encode(),
    )
    reply = _Reply(b"error")
    h = hover("a", 3)
    assert served(opened, h) == [opened, h]
    assert served(config, change("b", "x"), h) == [config, h, change("b", "x")]
    assert served(reply, h) == [reply, h]
    assert served(change("b", "x"), None, h) == [change("b", "x"), None, h]


def test_requests_keep_their_order() -> None:
    h1, h2 = hover("a", 1), hover("b", 2)
    assert served(change("c", "x"), h1, h2) == [h1, h2, change("c", "x")]


def test_the_edits_the_transport_applies_itself_are_exactly_the_protocols() -> None:
    from kin_memory.lsp.transport import _about

    span = {"start": {"line": 1, "character": 2}, "end": {"line": 3, "character": 4}}

    def about(changes: object, version: object = 2):
        return _about(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": "a", "version": version}, "contentChanges": changes}}).encode())  # fmt: skip

    read = about([{"text": "whole"}, {"range": span, "text": "part", "rangeLength": 3}])
    assert read.version == 2 and read.changes == ((None, "whole"), ((1, 2, 3, 4), "part"))
    # Anything else is left to pygls, which answers for it as before.
    for odd in (
        [{"range": {**span, "start": {"line": -1, "character": 0}}, "text": "x"}],
        [{"range": {**span, "end": {"line": True, "character": 0}}, "text": "x"}],
        [{"range": span, "text": 5}],
        [{"range": "everything", "text": "x"}],
        [],
        "text",
    ):
        assert about(odd).changes is None, odd
    assert about([{"text": "x"}], version=None).changes is None
    assert about([{"text": "x"}], version=1.5).changes is None
