"""The transports (stdio and TCP), hardened against a misbehaving client, on pygls's own message loop.

pygls's loop loses framing for good after bytes without a line end, answers nothing to a request whose
JSON or params it cannot read (the client then waits forever), and prints tracebacks for both. So a
thread frames the raw stream first: it resynchronises on the next `Content-Length` header, answers
JSON-RPC errors (ParseError, InvalidRequest, InvalidParams) where an id is known, drops over-deep or
oversized messages, collapses a burst of full-text didChange to the last text per document and lets a
request about one document go ahead of notifications about others. What
passes is handed, re-framed, to pygls's `run_async` through its public reader interface, so pygls
dispatches every message as usual. A client that goes away ends the server promptly and quietly.
Over TCP the door (door.py) admits one client first, and its framing is the protocol's only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, cast

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol

from . import door
from .scheduler import Scheduler
from .wire import FdReader, Outlet, Readable, frames, next_body

if TYPE_CHECKING:
    from .startup.front import Handover

log = logging.getLogger("kin_memory.lsp")
Framer = Callable[[Readable], bytes | None]  # the next message body from the stream, None at its end


def _quiet_client_errors(record: logging.LogRecord) -> bool:
    """pygls logs a full traceback for every message it cannot structure (we answer those and log one
    line), for every request a handler refuses (bad arguments: the error travels in the response) and
    for every write after the client went away. Those become one line; a real bug keeps its traceback."""
    if str(record.msg).startswith("Unable to deserialize message"):
        return False
    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, (JsonRpcException, ValueError, BrokenPipeError, ConnectionError)):
        # The reason as a sentence, not a Python exception's repr: this log is the editor's output pane.
        reason = exc.message if isinstance(exc, JsonRpcException) else str(exc) or "the connection closed"
        record.msg, record.args = f"{record.getMessage()}: {reason}", ()
        record.exc_info, record.exc_text = None, None
    return True


class _ClientWriter(StdoutWriter):
    """Writes to the client through the one Outlet (whole messages, os.write until every byte is out);
    once the client has closed its end, stops the server instead of raising (pygls would log a traceback
    per pending response). `screen` sees each message first and may drop it (returns b"")."""

    def __init__(self, stdout: BinaryIO | None, on_lost, outlet: Outlet | None = None,
                 screen: Callable[[bytes], bytes] | None = None) -> None:  # fmt: skip
        super().__init__(stdout)  # type: ignore[arg-type]
        self.lost = False
        self._on_lost = on_lost
        self.screen = screen
        self._lock = threading.Lock()  # an in-memory stream's whole messages, like the Outlet's
        self._outlet = outlet
        if outlet is None and stdout is not None:
            try:
                stdout.flush()  # anything written before: out first
                self._outlet = Outlet(stdout.fileno())
            except (AttributeError, OSError, ValueError):  # an in-memory stream (tests)
                pass

    def close(self) -> None:
        """At `exit`: the stream it was given, or else (the start-up front's) the descriptor."""
        if self._stdout is not None:
            super().close()
        elif self._outlet is not None:
            with self._outlet.lock:
                try:
                    os.close(self._outlet.fd)
                except OSError:
                    pass
        self.lost = True

    def write(self, data: bytes) -> None:
        if self.lost:
            return
        if self.screen is not None:
            data = self.screen(data)
            if not data:
                return
        try:
            if self._outlet is None:
                with self._lock:
                    super().write(data)
            else:
                self._outlet.send(data)
        except (BrokenPipeError, ConnectionError, ValueError) as exc:  # ValueError: the stream was closed
            self.lost = True
            log.info("the client closed the connection (%s): stopping", exc.__class__.__name__)
            self._on_lost()


def serve_stdio(
    server: LanguageServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    source = stdin or sys.stdin.buffer
    try:  # read the raw descriptor through our own buffer: a daemon thread parked inside sys.stdin's
        reader: Readable = FdReader(source.fileno())  # buffered reader would abort the interpreter at exit
    except (AttributeError, OSError, ValueError):  # an in-memory stream: read it as it is
        reader = source
    serve_stream(server, reader, stdout or sys.stdout.buffer)
    _exit_soon()


def serve_handover(server: LanguageServer, handover: Handover) -> None:
    """Serve stdio after the start-up front: what it read is dispatched first, then the rest of the
    input; its answer to `initialize` stands (pygls's own is dropped)."""
    received = handover.take_over()
    serve_stream(server, handover.reader, None, handover.outlet, received, handover.screen)
    _exit_soon()


def serve_tcp(server: LanguageServer, opened: door.Door) -> None:
    """One client over TCP, admitted by the door (door.py: the token, the strict framing, nothing before
    `initialize`), then served through the same hardened framing as stdio. The port closes once a client
    is admitted: a second connection is refused; one that is not admitted is closed and the next awaited."""
    listener = opened.listener
    try:
        with listener:
            conn, reader, first = _admitted(listener, opened.token)
        with conn, conn.makefile("wb", buffering=0) as wfile:
            reader.deadline = None
            serve_stream(server, reader, cast(BinaryIO, wfile), received=[first], framer=_door_framer)
    finally:
        door.remove_token(opened.path, opened.token)
    _exit_soon()


def _admitted(listener: socket.socket, token: str) -> tuple[socket.socket, door.TimedReader, bytes]:
    """The first connection that sends `initialize` with the token, its reader and that message."""
    while True:
        conn, _ = listener.accept()
        reader = door.TimedReader(conn.fileno(), time.monotonic() + door.ADMIT_WAIT)
        try:
            return conn, reader, door.admit(reader, conn.sendall, token)
        except (OSError, ValueError) as exc:  # door.Refused, or the client went away
            log.warning("kin-memory: closed a TCP connection: %s", exc)
            conn.close()


def _door_framer(stream: Readable) -> bytes | None:
    """After admission: the strict framing still (a breach ends the connection before its message runs),
    and no setting a TCP client may not set."""
    try:
        body = door.strict_body(stream)
    except door.Refused as exc:
        log.warning("kin-memory: closed the TCP connection: %s", exc)
        return None
    return None if body is None else door.screened_body(body)


def serve_stream(server: LanguageServer, reader: Readable, writer: BinaryIO | None,
                 outlet: Outlet | None = None, received: Sequence[bytes] = (),
                 screen: Callable[[bytes], bytes] | None = None, framer: Framer = next_body) -> None:  # fmt: skip
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_quiet_client_errors)
    logging.getLogger("pygls.io_").addFilter(_quiet_client_errors)
    stop = threading.Event()
    server.protocol.set_writer(_ClientWriter(writer, stop.set, outlet, screen))
    scheduler: Scheduler = getattr(server, "scheduler", None) or Scheduler()
    loop = asyncio.new_event_loop()
    # pygls's own executor jobs (if any) share the background pool: no thread outside the scheduler.
    loop.set_default_executor(scheduler.background)
    try:
        loop.run_until_complete(_serve(server, scheduler, reader, stop, received, framer))
    except BrokenPipeError:
        log.info("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        _close_loop(loop, scheduler)
        server.shutdown()


async def _serve(server: LanguageServer, scheduler: Scheduler, stream: Readable, stop: threading.Event,
                 received: Sequence[bytes] = (), framer: Framer = next_body) -> None:  # fmt: skip
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(_quiet_cancellation)
    queue: asyncio.Queue[tuple[_Item, _About]] = asyncio.Queue()
    protocol = server.protocol
    for body in received:  # read before the LSP stack was loaded (the start-up front)
        queue.put_nowait(_taken(protocol, body))

    def put(batch: list[tuple[_Item, _About]]) -> None:
        for taken in batch:
            queue.put_nowait(taken)

    def read() -> None:  # what each message is, worked out here: the event loop only orders them
        # Messages that arrived together are handed over together: waking the event loop for each one
        # made the two threads trade the interpreter lock hundreds of times during a burst of edits,
        # and the next read (a hover behind the burst) waited for all those turns.
        holds = getattr(stream, "holds_message", lambda: False)
        batch: list[tuple[_Item, _About]] = []
        try:
            for body in frames(stream, stop, framer):
                batch.append(_taken(protocol, body))
                if not holds():
                    loop.call_soon_threadsafe(put, batch)
                    batch = []
        except (OSError, ValueError) as exc:  # the stream closed under us
            log.info("stopped reading from the client: %s", exc)
        finally:
            loop.call_soon_threadsafe(put, [*batch, (None, _BARRIER)])

    scheduler.spawn("reader", read)
    screened = _ScreenedReader(queue, server)
    if hasattr(server, "waiting"):  # how far behind the editor the server is: features defer work then
        server.waiting = lambda: screened.pending.live + queue.qsize()
    await run_async(stop_event=stop, reader=screened, protocol=protocol, logger=log,
                    error_handler=server.report_server_error)  # fmt: skip


def _close_loop(loop: asyncio.AbstractEventLoop, scheduler: Scheduler) -> None:
    """Cancel what is still running and stop without waiting for the scheduler's threads: the client
    is gone (asyncio.run would wait for every executor job and fire timers meanwhile)."""
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=2))
    scheduler.shutdown()
    # Left stopped, not closed: a background thread finishing its work may still post a callback to it
    # (on a closed loop that raises in the thread); nothing runs it any more.


def _exit_soon(grace: float = 3.0) -> None:
    # A worker thread still busy (a store load, an index batch) must not keep a server whose client has
    # left alive: normal interpreter exit gets `grace` seconds, then the process ends regardless.
    timer = threading.Timer(grace, os._exit, args=(0,))
    timer.daemon = True
    timer.start()


def _quiet_cancellation(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    # The client left mid-request: the handlers still running are cancelled at exit. Nothing is wrong.
    if isinstance(context.get("exception"), asyncio.CancelledError):
        return
    loop.default_exception_handler(context)


@dataclass(frozen=True)
class _About:
    """What the batching needs to know of a message: the document it concerns, whether it replaces that
    document's whole text, whether it is a request about that document (which waits for an answer)."""

    uri: str | None = None
    full_change: bool = False
    doc_request: bool = False
    edit: bool = False  # a didChange: what a request about another document may pass
    # A didChange's new version and its changes ((range as line, character, end line, end character, or
    # None for the whole text), text), when all of it is what the protocol says (see server.TextChange).
    version: int | None = None
    changes: tuple[tuple[tuple[int, int, int, int] | None, str], ...] | None = None


_BARRIER = _About()  # anything else: nothing moves across it


def _about(body: bytes | None) -> _About:
    message = _document_message(body)
    if message is None:
        return _BARRIER
    data, params, doc = message
    uri, method = doc["uri"], data["method"]
    changes = params.get("contentChanges")
    is_request = "id" in data
    edit = method == "textDocument/didChange" and not is_request
    full = edit and isinstance(changes, list) and len(changes) == 1 and _whole_text(changes[0])
    version = doc.get("version")
    read = _changes(changes) if edit and _is_int(version) else None
    return _About(uri, full, is_request, edit, version if read is not None else None, read)


def _document_message(body: bytes | None) -> tuple[dict, dict, dict] | None:
    """(message, params, textDocument) of a `textDocument/...` message naming its document by a string
    URI; None for anything else (a barrier)."""
    if body is None or isinstance(body, _Reply) or b"textDocument" not in body:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    method = data.get("method") if isinstance(data, dict) else None
    params = data.get("params") if isinstance(data, dict) else None
    doc = params.get("textDocument") if isinstance(params, dict) else None
    uri = doc.get("uri") if isinstance(doc, dict) else None
    if not isinstance(uri, str) or not isinstance(method, str) or not method.startswith("textDocument/"):
        return None
    assert isinstance(params, dict) and isinstance(doc, dict)
    return data, params, doc


def _whole_text(change: object) -> bool:
    return isinstance(change, dict) and "range" not in change


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31


def _changes(raw: object) -> tuple[tuple[tuple[int, int, int, int] | None, str], ...] | None:
    """A didChange's content changes, or None when any is not exactly what the protocol says (pygls then
    reads the message and answers for it)."""
    if not isinstance(raw, list) or not raw:
        return None
    out: list[tuple[tuple[int, int, int, int] | None, str]] = []
    for change in raw:
        text = change.get("text") if isinstance(change, dict) else None
        if not isinstance(text, str):
            return None
        if "range" not in change:
            out.append((None, text))
            continue
        span = change["range"]
        start = span.get("start") if isinstance(span, dict) else None
        end = span.get("end") if isinstance(span, dict) else None
        points = [
            p.get(k) if isinstance(p, dict) else None for p in (start, end) for k in ("line", "character")
        ]
        if not all(_is_int(v) for v in points):
            return None
        out.append(((points[0], points[1], points[2], points[3]), text))  # type: ignore[arg-type]
    return tuple(out)


class _Pending:
    """Messages received and not yet served, kept so that a batch that arrives together is served in less
    time, with the same answers:

    - a full-text didChange replaces an earlier one of the same document that nothing after it concerns
      (the final text is the same, and no request saw the dropped one);
    - a request about a document (hover, completion, code actions) goes ahead of edits (didChange) of
      *other* documents, taking its own document's edits with it: its answer depends on its own document,
      whose changes it never passes, so during a burst of typing in many files a hover waits for its own
      file's last edit only. Opening, closing and saving are never passed: a client may use any request
      as a barrier for those."""

    def __init__(self) -> None:
        # Entries are [message, about, alive]: a replaced change is marked dead where it stands and
        # skipped when its turn comes (a burst keeps hundreds waiting; rebuilding the list for each
        # replacement made every arrival cost the loop a pass over all of them).
        self.items: deque[list] = deque()
        self.last_full: dict[
            str, list
        ] = {}  # uri -> the entry of its latest full change nothing later concerns
        self.live = 0  # messages waiting (dead entries not counted)

    def __bool__(self) -> bool:
        return self.live > 0

    def add(self, item: _Item, about: _About | None = None) -> None:
        """`about`: what _about says of the item, when the reader thread worked it out already."""
        if about is None:
            about = _about(item)
        entry = [item, about, True]
        if about.uri is not None:
            replaced = self.last_full.pop(about.uri, None)
            if about.full_change and replaced is not None:
                replaced[2] = False
                self.live -= 1
            if about.full_change:
                self.last_full[about.uri] = entry
        if about.doc_request:
            self._ahead(entry)
        else:
            self.items.append(entry)
        self.live += 1

    def _ahead(self, entry: list) -> None:
        """A request about a document goes to the start of the edits waiting at the end of the queue,
        with its own document's edits among them (in their order): edits of different documents
        commute, so every answer is the same, and the request waits for its own document only."""
        items, uri = self.items, entry[1].uri
        at = len(items)
        while at > 0 and (not items[at - 1][2] or items[at - 1][1].edit):
            at -= 1
        if at == len(items):
            items.append(entry)
            return
        run = [items.pop() for _ in range(len(items) - at)][::-1]
        own = [e for e in run if e[2] and e[1].uri == uri]
        items.extend(own)
        items.append(entry)
        items.extend(e for e in run if e[2] and e[1].uri != uri)

    def pop(self) -> _Item:
        return self.pop_about()[0]

    def pop_about(self) -> tuple[_Item, _About]:
        while True:
            entry = self.items.popleft()
            if entry[2]:
                break
        self.live -= 1
        item, about = entry[0], entry[1]
        if about.uri is not None and self.last_full.get(about.uri) is entry:
            del self.last_full[about.uri]
        return item, about


def _valid_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _error_frame(msg_id: object, exc: JsonRpcException) -> bytes:
    # JSON-RPC wants `"id": null` when the id is unknown, which pygls's typed response would drop.
    body = {
        "jsonrpc": "2.0",
        "id": msg_id if _valid_id(msg_id) else None,
        "error": {"code": exc.code, "message": exc.message},
    }
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(data), data)


class _Reply(bytes):
    """An error answer to write back instead of a message to dispatch."""


_Item = bytes | None  # a body to dispatch, a _Reply to write, or None at the end of the stream


def _taken(protocol: JsonRPCProtocol, body: bytes) -> tuple[bytes, _About]:
    """A message as the reader thread hands it over: screened, and what the ordering needs to know."""
    item = _screen_safely(protocol, body)
    return item, _about(item)


def _screen_safely(protocol: JsonRPCProtocol, body: bytes) -> bytes:
    """No message may stop the reader: whatever screening itself trips over is answered as a parse error."""
    try:
        return _screen(protocol, body)
    except Exception as exc:  # noqa: BLE001 - the client must get an answer and the server must go on
        log.warning("dropped a message that could not be read: %s", type(exc).__name__)
        return _Reply(_error_frame(None, JsonRpcParseError()))


def _screen(protocol: JsonRPCProtocol, body: bytes) -> bytes:
    """The body when pygls can dispatch it; otherwise the error answer it deserves (or an empty reply)."""
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except JsonRpcException:
        return _invalid(body)
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, or nested past any sane depth
        log.warning("dropped a message that is not usable JSON: %s", type(exc).__name__)
        return _Reply(_error_frame(None, JsonRpcParseError()))
    if getattr(message, "jsonrpc", None) != "2.0":
        msg_id = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
        log.warning("dropped an invalid JSON-RPC message")
        if isinstance(message, dict) and "method" not in message and "id" in message:
            return _Reply(b"")
        return _Reply(_error_frame(msg_id, JsonRpcInvalidRequest()))
    if hasattr(message, "method") and hasattr(message, "id") and not _valid_id(message.id):
        log.warning("dropped request %s: its id is not an integer or string", message.method)
        return _Reply(_error_frame(None, JsonRpcInvalidRequest()))
    return body


def _invalid(body: bytes) -> _Reply:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        log.warning("dropped a message that is not usable JSON: %s", type(exc).__name__)
        return _Reply(_error_frame(None, JsonRpcParseError()))
    method = data.get("method") if isinstance(data, dict) else None
    if (
        isinstance(data, dict)
        and isinstance(method, str)
        and _valid_id(data.get("id"))
        and data.get("jsonrpc") == "2.0"
    ):
        log.warning("invalid params for request %s", method)
        return _Reply(
            _error_frame(data["id"], JsonRpcInvalidParams(f"The parameters of {method} are not valid."))
        )
    if isinstance(data, dict) and "id" in data:
        log.warning("dropped an invalid request")
        return _Reply(_error_frame(data["id"], JsonRpcInvalidRequest()))
    log.warning("dropped notification %s: invalid params", method)
    return _Reply(b"")


class _ScreenedReader:
    """pygls's AsyncReader over the screened queue: each body is re-framed as one clean header; messages
    waiting to be served are coalesced and ordered by `_Pending`."""

    def __init__(self, queue: asyncio.Queue[tuple[_Item, _About]], server: LanguageServer) -> None:
        self.queue = queue
        self.server = server
        self.pending = _Pending()
        # A didChange handed straight to the server (when it offers it): a burst of edits is these, and
        # pygls's generic dispatch costs each several times the edit itself.
        self.apply_change: Callable[[_About], bool] | None = getattr(server, "apply_change", None)
        self.body = b""
        self.header_sent = False

    async def readline(self) -> bytes:
        if self.header_sent:
            self.header_sent = False
            return b"\r\n"
        while True:
            # Yield before each message: the loop then runs the tasks of requests already dispatched
            # and takes in what the reader thread received meanwhile, so a hover that arrives during a
            # burst joins the pending messages (ahead of other documents' changes) instead of waiting.
            await asyncio.sleep(0)
            if not self.pending:
                self.pending.add(*await self.queue.get())
            while not self.queue.empty():
                self.pending.add(*self.queue.get_nowait())
            item, about = self.pending.pop_about()
            if item is None:
                return b""
            if about.changes is not None and self.apply_change is not None and self.apply_change(about):
                continue  # applied without going through pygls's dispatch (see KinMemoryServer)
            if isinstance(item, _Reply):
                writer = self.server.protocol.writer
                if item and writer is not None:
                    writer.write(bytes(item))
                continue
            self.body, self.header_sent = item, True
            return b"Content-Length: %d\r\n" % len(item)

    async def readexactly(self, n: int) -> bytes:
        body, self.body = self.body, b""
        return body[:n]
