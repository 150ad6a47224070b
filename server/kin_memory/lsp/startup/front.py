"""The start-up front: the first exchange with the editor, before the LSP stack is imported.

Importing pygls and lsprotocol takes about a third of a second of CPU, and until now nothing reached the
editor before it was done: not the answer to `initialize`, not the settings round trip, not a single
diagnostic. On a warm start the workers have the whole store's diagnostics ready long before that. So
`kin-memory serve` (stdio) first runs this front, which speaks just enough of the protocol by hand:

1. it reads `initialize` and sends handshake.early_answer (the answer pygls gave a client with the same
   capabilities before, else the one this code's server gives); for a client whose capabilities it does
   not judge, it hands everything over;
2. it reads `initialized` and asks the client for its `kinMemory` settings (`workspace/configuration`);
3. with the settings applied to the session, it starts the first check on the scheduler's background
   pool (the scheduler is made here and handed to the server): the workers' diagnostics stream
   straight to the editor, their records become the store;
4. it goes on reading while the LSP stack imports, and answers searches once the check found the recall
   index current (see early.py).

Then the LSP stack is imported while that check runs. pygls is handed every message the front read (it
handles `initialize` as usual, its answer is dropped: the editor already has the same one) and the rest
of the input. Anything unexpected (another first message, a client that does not answer) ends the front
early and pygls does the rest, exactly as without it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..scheduler import Scheduler
from ..wire import FdReader, Outlet, frame, next_body
from .handshake import early_answer, handshake_key, remember

if TYPE_CHECKING:  # made once `initialize` is answered: the session's imports take tens of milliseconds
    from ..session import Session
    from .early import EarlySearch
    from .shards import Shards

log = logging.getLogger("kin_memory.lsp")

NEXT_WAIT = 1.0  # seconds to wait for `initialized` after the answer to `initialize`
SETTINGS_ID = "kin-memory-start-settings"


@dataclass
class Handover:
    """What the front leaves to the language server."""

    reader: FdReader
    outlet: Outlet
    received: list[bytes] = field(default_factory=list)  # for pygls, in the order they came
    screen: Callable[[bytes], bytes] | None = None  # sees pygls's first output (see ReplyScreen)
    answered: bool = False  # `initialize` answered, its params applied to the session
    settings: object = None  # the settings applied to the session (pulled, else the initialization options)
    pulled: bool = False  # the client was asked for its settings and answered
    check: Future | None = None  # the first check (strategy.FrontCheck | None), running
    recall_synced: threading.Event = field(default_factory=threading.Event)  # the index matched the store
    shards: Shards | None = None  # the workers, when the front did not use them
    early: EarlySearch | None = None  # answering searches while the LSP stack imports: stopped first
    scheduler: Scheduler = field(default_factory=Scheduler)  # the server's threads, from the first one on

    def wait_before_import(self, timeout: float) -> None:
        """Before the LSP stack is imported: until the first check is done, while only searches came (the
        check has the processors to itself: importing meanwhile slows it down and no one waits for the
        server yet); at once when something else came or the front could not start the check."""
        check, early = self.check, self.early
        if check is None or early is None:
            return
        check.add_done_callback(lambda _: early.wanted.set())
        early.wanted.wait(timeout)

    def take_over(self) -> list[bytes]:
        """What the server serves first: every message read before it, less the searches answered."""
        if self.early is not None:
            self.early.stop()
            self.early = None
        return self.received


class ReplyScreen:
    """pygls's answer to the request the front handled: dropped when the front answered it (and kept for
    the next start should it differ from what was sent), otherwise remembered for the next start. Only
    the first messages are looked at."""

    def __init__(self, request_id: object, drop: bool, keep: Callable[[object], None] | None = None,
                 sent: dict | None = None) -> None:  # fmt: skip
        self.request_id = request_id
        self.drop = drop
        self.keep = keep
        self.sent = sent  # what the front answered: pygls's answer is kept only when it differs
        self.done = False

    def __call__(self, data: bytes) -> bytes:
        if self.done:
            return data
        body = data.partition(b"\r\n\r\n")[2]
        try:
            message = json.loads(body)
        except ValueError:
            return data
        if not isinstance(message, dict) or "method" in message or message.get("id") != self.request_id:
            return data
        self.done = True
        result = message.get("result")
        differs = self.drop and self.sent is not None and result is not None and result != self.sent
        if differs:  # a bug in capabilities.py: the next start sends pygls's own answer
            log.warning("the initialize answer sent differs from the server's; kept for the next start")
        if self.keep is not None and "result" in message and (differs or not self.drop):
            self.keep(result)  # the front's keep queues the write on the background pool
        return b"" if self.drop else data


class Front:
    def __init__(self, make_session: Callable[[], Session], shards: Shards | None, reader: FdReader,
                 outlet: Outlet) -> None:  # fmt: skip
        self.make_session = make_session
        self.session: Session | None = None
        self.shards = shards
        self.reader = reader
        self.outlet = outlet
        self.handover = Handover(reader, outlet, shards=shards)

    def run(self) -> tuple[Session, Handover]:
        try:
            self._run()
        except (OSError, ValueError) as exc:  # the editor went away or sent nonsense: pygls sees to it
            log.info("start-up front stopped early: %s", exc)
        return self.session or self.make_session(), self.handover

    def _read(self, wait: float | None) -> dict | None:
        """The next message, kept for pygls; None at the end, after `wait` seconds without input, or for
        a body that is not a JSON object."""
        if wait is not None and not self.reader.wait(time.monotonic() + wait):
            return None
        body = next_body(self.reader)
        if body is None:
            return None
        self.handover.received.append(body)
        try:
            message = json.loads(body)
        except ValueError:
            return None
        return message if isinstance(message, dict) else None

    def _run(self) -> None:
        first = self._read(None)
        if first is None or first.get("method") != "initialize" or not _is_id(first.get("id")):
            return
        params = first.get("params")
        key = handshake_key(params)
        if key is None or not isinstance(params, dict):
            return
        answer = early_answer(key, params)
        scheduler = self.handover.scheduler

        def keep(result: object) -> None:
            scheduler.submit(remember, key, result)

        if answer is None:  # pygls answers; its answer is kept for the next start
            self.handover.screen = ReplyScreen(first["id"], drop=False, keep=keep)
            return
        self.outlet.send(frame({"jsonrpc": "2.0", "id": first["id"], "result": answer}))
        self.handover.screen = ReplyScreen(first["id"], drop=True, keep=keep, sent=answer)
        self.handover.answered = True
        self.session = self.make_session()
        self._take_initialize(self.session, params, answer)
        following = self._read(NEXT_WAIT)
        if following is None or following.get("method") != "initialized":
            return
        handled = len(self.handover.received)  # what came after `initialized` is the server's
        if _capability(params, "workspace", "configuration"):
            settings = self._pull_settings()
            if settings is None:
                return
            self._apply(self.session, settings)
            self.handover.pulled = True
        self._start_check(handled)

    def _take_initialize(self, session: Session, params: dict, answer: dict) -> None:
        """The params read as the server's initialize handler reads them, for the check to start with."""
        encoding = answer["capabilities"].get("positionEncoding")
        self._apply(
            session, session.take_initialize(params, encoding if isinstance(encoding, str) else "utf-16")
        )

    def _apply(self, session: Session, settings: object) -> None:
        session.apply_settings(settings)
        self.handover.settings = settings

    def _pull_settings(self) -> object | None:
        """The client's `kinMemory` settings ({} when it has none); None when it did not answer in time."""
        from ..session import CONFIG_TIMEOUT, SETTINGS_SECTION, settings_of

        request = {"jsonrpc": "2.0", "id": SETTINGS_ID, "method": "workspace/configuration",
                   "params": {"items": [{"section": SETTINGS_SECTION}]}}  # fmt: skip
        self.outlet.send(frame(request))
        deadline = time.monotonic() + CONFIG_TIMEOUT
        while True:
            if not self.reader.wait(deadline):
                return None
            body = next_body(self.reader)
            if body is None:
                return None
            try:
                message = json.loads(body)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("id") == SETTINGS_ID and "method" not in message:
                return settings_of(message.get("result"))
            self.handover.received.append(body)

    def _start_check(self, handled: int) -> None:
        shards, session = self.shards, self.session
        if shards is None or session is None:
            return
        from .strategy import check_in_front

        handover = self.handover
        future = handover.scheduler.submit(
            check_in_front, session, shards, self.outlet, handover.recall_synced, handover.scheduler
        )
        if future is None:
            return
        handover.check = future
        self.handover.shards = None

        from .early import EarlySearch

        handover.early = EarlySearch(session, handover.scheduler, self.reader, self.outlet, handover.received,
                                     handled, future, handover.recall_synced)  # fmt: skip
        handover.early.start()


def _is_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _capability(params: dict, *path: str) -> bool:
    node: object = params.get("capabilities")
    for name in path:
        node = node.get(name) if isinstance(node, dict) else None
    return bool(node)
