"""Searches answered by the start-up front while the LSP stack imports.

On a warm start the workers have checked the store and found the recall index current in a few tenths of
a second, and the LSP stack takes about half a second of CPU to import after that: a `kin.memory.search`
sent at once (the editor restoring a search view, an agent asking right after spawning the server) waited
for the import although its answer was ready. A thread of its own reads the input while the stack imports and
answers searches from the index, through the same core call the server uses, once the start-up check
said the index matches the store (never before: an answer from it is then complete, as the server's).

Only while nothing that could change what a search finds came first: every message before an answered
search is another search or a notification that changes nothing (`$/setTrace`, `$/cancelRequest`). At
the first other message (an opened buffer, a tool command, any other request), at anything it cannot
read, when a search's argument is not valid, or when the index is not found current, it stops and leaves
that message and everything after it to the server, in order. The server is handed what it read, less
the searches it answered.
"""

from __future__ import annotations

import json
import logging
import os
import select
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

from ..wire import HEADER, FdReader, Outlet, frame, next_body

if TYPE_CHECKING:
    from ...recall.service import Recall
    from ..scheduler import Scheduler
    from ..session import Session

log = logging.getLogger("kin_memory.lsp")

SEARCH = "kin.memory.search"
HARMLESS = frozenset({"$/setTrace", "$/cancelRequest", "$/progress"})  # notifications a search does not see
POLL = 0.01  # seconds between looks at the start-up check while a search waits for it
LOADING_NOTE = "the semantic layer is still loading: these results matched words only"
MAX_BUFFERED = 1 << 20  # bytes of one message read here at most; a bigger one is left to the server


class EarlySearch:
    """Reads the input from `received[start:]` on, answers searches; `stop` before the server reads."""

    def __init__(self, session: Session, scheduler: Scheduler, reader: FdReader, outlet: Outlet,
                 received: list[bytes], start: int, check: Future, synced: threading.Event) -> None:  # fmt: skip
        self.session = session
        self.scheduler = scheduler
        self.reader = reader
        self.outlet = outlet
        self.received = received
        self.seen = start  # messages of `received` looked at
        self.check = check
        self.synced = synced
        self.pending: list[tuple[int, object, object]] = []  # (index in received, request id, argument)
        self.answered: set[int] = set()
        self.wake_r, self.wake_w = os.pipe()
        self.thread: threading.Thread | None = None
        self.recall: Recall | None = None  # opened for the first answer
        # Set when this thread stopped reading (a message only the server can handle, the end of the
        # input, ...): the server is wanted now, not only once the check is done.
        self.wanted = threading.Event()

    def start(self) -> None:
        self.thread = self.scheduler.spawn("early-search", self._run)

    def stop(self) -> list[bytes]:
        """Stop reading (at once, between two reads) and hand over what was read, less what was answered."""
        os.write(self.wake_w, b"x")
        if self.thread is not None:
            self.thread.join()
        os.close(self.wake_r)
        os.close(self.wake_w)
        received = [body for i, body in enumerate(self.received) if i not in self.answered]
        self.received[:] = received
        return received

    def _run(self) -> None:
        try:
            self._serve()
        except Exception as exc:  # noqa: BLE001 - the server answers whatever is left
            log.info("early search stopped: %r", exc)
        finally:
            if self.recall is not None:
                self.recall.index.close()
            self.wanted.set()

    def _serve(self) -> None:
        while True:
            while self.seen < len(self.received):  # what was read before, then each new message
                if not self._look(self.received[self.seen]):
                    return
                self.seen += 1
            if self.pending and not self._answer_pending():
                return
            if not self._read_more():
                return

    def _read_more(self) -> bool:
        """Wait for a whole message (kept in `received`) or, while searches wait, the next look at the
        check; False when stopped, at the end of the input, or at input this thread leaves alone."""
        reader = self.reader
        while not reader.holds_message():
            if len(reader.buf) > MAX_BUFFERED or _unframed(reader.buf):
                return False
            ready = select.select([reader.fd, self.wake_r], [], [], POLL if self.pending else None)[0]
            if self.wake_r in ready:
                return False
            if reader.fd in ready and not reader.fill():
                return False
            if not ready:
                return True
        body = next_body(reader)
        if body is None:
            return False
        self.received.append(body)
        return True

    def _look(self, body: bytes) -> bool:
        """Note a search, pass a harmless message; False at anything else."""
        try:
            message = json.loads(body)
        except ValueError:
            return False
        if not isinstance(message, dict):
            return False
        method = message.get("method")
        if method is None:  # an answer to something the server asked: changes nothing here
            return True
        if method in HARMLESS and "id" not in message:
            return True
        params = message.get("params")
        request_id = message.get("id")
        if (
            method == "workspace/executeCommand"
            and isinstance(params, dict)
            and params.get("command") == SEARCH
            and isinstance(request_id, (int, str))
            and not isinstance(request_id, bool)
        ):
            args = params.get("arguments")
            self.pending.append((self.seen, request_id, args[0] if isinstance(args, list) and args else None))
            return True
        return False

    def _answer_pending(self) -> bool:
        """Answer the waiting searches once the index is known current; False when it will not be."""
        if not self.synced.is_set():
            self._prepare()
            # Said by the check before it is done, or not said here at all (the server syncs the index).
            return not self.check.done() or self.synced.is_set()
        while self.pending:
            index, request_id, argument = self.pending[0]
            result = self._search(argument)
            if result is None:
                return False
            self.outlet.send(frame({"jsonrpc": "2.0", "id": request_id, "result": result}))
            self.answered.add(index)
            self.pending.pop(0)
        return True

    def _prepare(self) -> None:
        """While a search waits for the check: the index opened and its vocabulary read (the saved copy,
        a tenth of a second at 100k memories), so the answer follows the check at once. A copy read
        before the check's last writes is safe: a query word missing from it is looked up in the index."""
        if self.recall is not None:
            return
        from ... import protocol  # noqa: F401 - the import is the point
        from ...recall.service import Recall

        self.recall = Recall(self.session.root)
        index = self.recall.index
        if index.path.is_file() and index.available():  # never made here: the server's recall does that
            index.lexicon()

    def _search(self, argument: object) -> object | None:
        """The search's result as the server would send it; None when the server should answer it (an
        argument it refuses, recall disabled, a workspace it refuses)."""
        from ... import protocol
        from ...recall.results import answer_search
        from ...recall.service import Recall
        from ...store.workspace import WorkspaceValueError, workspace_value

        session = self.session
        try:
            params = protocol.parse(protocol.SearchParams, argument)
            active = session.active() if params.workspace is None else workspace_value(params.workspace)
        except (protocol.ProtocolError, WorkspaceValueError):
            return None
        if not session.file_settings().memory_enabled:
            return None
        if self.recall is None:
            self.recall = Recall(session.root)
        if not self.recall.index.available():
            return None
        # The model is not loaded here (that would cost the early answer its point): by words, and said so.
        note = LOADING_NOTE if session.semantic_wanted() else None
        result = answer_search(self.recall, params, active, session.context(), session.uri_of, True, note)
        return protocol.dump(result)


def _unframed(buf: bytearray) -> bool:
    """A complete header block without a Content-Length: not for this thread to skip."""
    end = buf.find(b"\r\n\r\n")
    return end >= 0 and HEADER.search(buf, 0, end) is None
