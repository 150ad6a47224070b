"""The stdio transport, hardened against a misbehaving client.

pygls's own loop loses framing for good after bytes without a line end, answers nothing to a request
whose JSON or params it cannot read (the client then waits forever), and prints tracebacks for both.
This loop resynchronises on the next `Content-Length` header, answers JSON-RPC errors (ParseError,
InvalidRequest, InvalidParams) where an id is known, logs one line otherwise, and bounds what it
buffers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from typing import BinaryIO

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.io_ import StdoutWriter

log = logging.getLogger("kin_memory.lsp")

_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
MAX_HEADER_LINE = 64 * 1024
MAX_BODY = 256 * 1024 * 1024


def _quiet_deserialize(record: logging.LogRecord) -> bool:
    # pygls logs a full traceback for every message it cannot structure; we answer and log one line.
    return not str(record.msg).startswith("Unable to deserialize message")


def serve_stdio(server, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_quiet_deserialize)
    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(_read_loop(server, stdin or sys.stdin.buffer))
    except BrokenPipeError:
        log.info("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def _read_exactly(stream: BinaryIO, n: int) -> bytes:
    chunks = []
    while n > 0:
        chunk = stream.read(min(n, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


async def _read_loop(server, stdin: BinaryIO) -> None:
    loop = asyncio.get_running_loop()

    def read(fn, *args):
        return loop.run_in_executor(server.thread_pool, fn, *args)

    while not server._stop_event.is_set():
        length: int | None = None
        while True:
            line = await read(stdin.readline, MAX_HEADER_LINE)
            if not line:
                return
            if not line.strip():
                if length is not None:
                    break
                continue
            match = _HEADER.search(line)
            if match:
                if match.start() > 0 or length is not None:
                    log.warning("skipped %d bytes of unframed input", match.start())
                length = int(match.group(1))
        if length > MAX_BODY:
            log.warning("dropped a %d-byte message: over the %d-byte limit", length, MAX_BODY)
            while length > 0:
                skipped = len(await read(stdin.read, min(length, 1 << 20)))
                if not skipped:
                    return
                length -= skipped
            continue
        body = await read(_read_exactly, stdin, length)
        if len(body) < length:
            return
        _handle(server.protocol, body)


def _valid_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _reply_error(protocol, msg_id: object, exc: JsonRpcException) -> None:
    # Sent as a plain dict: JSON-RPC wants `"id": null` when the id is unknown, which the typed
    # response (None fields omitted) would drop.
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id if _valid_id(msg_id) else None,
                         "error": {"code": exc.code, "message": exc.message}})


def _handle(protocol, body: bytes) -> None:
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except JsonRpcException:
        try:
            data = json.loads(body)
        except ValueError as exc:
            log.warning("dropped a message that is not JSON: %s", exc)
            _reply_error(protocol, None, JsonRpcParseError())
            return
        method = data.get("method") if isinstance(data, dict) else None
        if isinstance(data, dict) and isinstance(method, str) and _valid_id(data.get("id")) and data.get("jsonrpc") == "2.0":
            log.warning("invalid params for request %s", method)
            _reply_error(protocol, data["id"], JsonRpcInvalidParams(f"Invalid params for {method}"))
        elif isinstance(data, dict) and "id" in data:
            log.warning("dropped an invalid request")
            _reply_error(protocol, data["id"], JsonRpcInvalidRequest())
        else:
            log.warning("dropped notification %s: invalid params", method)
        return
    except ValueError as exc:  # not JSON (UnicodeDecodeError included)
        log.warning("dropped a message that is not JSON: %s", exc)
        _reply_error(protocol, None, JsonRpcParseError())
        return
    if getattr(message, "jsonrpc", None) != "2.0":
        msg_id = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
        log.warning("dropped an invalid JSON-RPC message")
        if not (isinstance(message, dict) and "method" not in message and "id" in message):
            _reply_error(protocol, msg_id, JsonRpcInvalidRequest())
        return
    if hasattr(message, "method") and hasattr(message, "id") and not _valid_id(message.id):
        log.warning("dropped request %s: its id is not an integer or string", message.method)
        _reply_error(protocol, None, JsonRpcInvalidRequest())
        return
    protocol.handle_message(message)
