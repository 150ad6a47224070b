"""Every line the client sends gets an answer: the frames are screened before the SDK reads them.

The SDK's stdio transport parses each line and, when that fails (JSON nested deeper than its parser
goes, a lone surrogate escape such as "\\udc80", a line that is no JSON-RPC message), hands the server
an error without the request's id: nothing is answered and the client waits forever. Here the same
parse runs first; a line it refuses is answered at once with a JSON-RPC error carrying the request's id
(read from the line without parsing it, so a 50,000-deep line costs one pass), and the server goes on
with the next line.

The client's frames are read from a private copy of fd 0, which itself then reads the null device: no
child process or stray read can take a frame off the wire.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections.abc import AsyncIterable, AsyncIterator

import anyio
import anyio.abc
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

from ..wording import counted

DEEP = 100  # nesting levels past which a refused line is said to be too deep (the SDK reads about 200)
# One JSON token: a string (escapes kept whole), a bracket or separator, or a bare word (number, literal).
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)

NOT_JSON = "The message is not JSON: nothing was done."
NOT_RPC = "The message is JSON but not a JSON-RPC message this server reads: nothing was done."
SURROGATE = (
    "The message holds a lone surrogate escape (a \\ud800-\\udfff escape without its pair), which is no "
    "character: nothing was done."
)


def too_deep(depth: int) -> str:
    return f"The message is nested {counted(depth, 'level')} deep, too deep to be read: nothing was done."


def outline(line: str) -> tuple[int | str | None, int]:
    """(the top-level object's "id" when it is a number or a string, the deepest nesting) of a line,
    read token by token without building anything."""
    depth = deepest = 0
    found: int | str | None = None
    key: str | None = None  # the top-level key being read
    at_id = False  # right after `"id":` at the top level
    for m in TOKEN.finditer(line):
        tok = m.group()
        if tok in ("{", "["):
            depth += 1
            deepest = max(deepest, depth)
            at_id = False
        elif tok in ("}", "]"):
            depth -= 1
        elif depth != 1:
            continue
        elif tok == ":":
            at_id = key == "id"
        elif tok == ",":
            key, at_id = None, False
        elif at_id:
            found, at_id = _plain_id(tok), False
        elif tok.startswith('"'):
            key = tok[1:-1]
    return found, deepest


def _plain_id(tok: str) -> int | str | None:
    """A JSON-RPC id as the reply can carry it: an integer, or a string that is text."""
    try:
        value = json.loads(tok)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return value


def _is_text(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def refusal(line: str) -> types.JSONRPCError | None:
    """None when the SDK reads this line; otherwise the error that answers it."""
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValidationError:
        pass
    request_id, depth = outline(line)
    code, message = PARSE_ERROR, NOT_JSON
    if depth > DEEP:
        message = too_deep(depth)
    else:
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        else:
            code, message = (INVALID_REQUEST, NOT_RPC) if _is_text(value) else (PARSE_ERROR, SURROGATE)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class Screened:
    """The client's lines as the SDK's stdio transport iterates them, the ones it cannot read answered
    here instead (through `answer_to`, the server's write stream, once the transport gave it)."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self.lines = lines
        self._out: anyio.abc.ObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_to(self, out: anyio.abc.ObjectSendStream[SessionMessage]) -> None:
        self._out = out
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.lines:
            if not line.strip():
                continue  # a blank line between frames is no message
            error = refusal(line)
            if error is None:
                yield line
                continue
            await self._ready.wait()
            assert self._out is not None
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._out.send(SessionMessage(error))


def wire_stdin() -> AsyncIterable[str]:
    """The client's lines, read from a private copy of fd 0 (fd 0 then reads the null device); decoded
    as UTF-8 with undecodable bytes replaced, as the SDK decodes them."""
    wire = os.dup(0)
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    text = io.TextIOWrapper(os.fdopen(wire, "rb"), encoding="utf-8", errors="replace")
    return anyio.wrap_file(text)
