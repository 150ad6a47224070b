"""The start-up front: the first exchange with the editor, before the LSP stack is imported.

Importing pygls and lsprotocol takes about a third of a second of CPU, and until now nothing reached the
editor before it was done: not the answer to `initialize`, not the settings round trip, not a single
diagnostic. On a warm start the workers have the whole store's diagnostics ready long before that. So
`kin-memory serve` (stdio) first runs this front, which speaks just enough of the protocol by hand:

1. it reads `initialize` and sends the answer pygls gave a client with the same capabilities before (on
   this machine, see handshake.py) or, the first time, the one this code's server gives (capabilities.py);
   for a client whose capabilities it does not judge, it hands everything over;
2. it reads `initialized` and asks the client for its `kinMemory` settings (`workspace/configuration`);
3. with the settings applied to the session, it starts the first check on a thread of its own: the
   workers' diagnostics stream straight to the editor, their records become the store;
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

from ..wire import FdReader, Outlet, frame, next_body
from .capabilities import initialize_answer
from .handshake import handshake_key, remember, remembered

if TYPE_CHECKING:  # made once `initialize` is answered: the session's imports take tens of milliseconds
    from ..session import Session
    from .early import EarlySearch
    from .shards import Shards

log = logging.getLogger("kin_memory.lsp")

NEXT_WAIT = 1.0  # seconds to wait for `initialized` after the answer to `initialize`
CONFIG_TIMEOUT = 5.0  # seconds the client gets to answer workspace/configuration (as the server gives)
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
            threading.Thread(target=self.keep, args=(result,), daemon=True).start()
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
        # What pygls said before for this client, else what this code's server says (capabilities.py).
        answer = remembered(key, params) or initialize_answer(params)
        if answer is None:  # pygls answers; its answer is kept for the next start
            self.handover.screen = ReplyScreen(first["id"], drop=False, keep=lambda r: remember(key, r))
            return
        self.outlet.send(frame({"jsonrpc": "2.0", "id": first["id"], "result": answer}))

        self.handover.screen = ReplyScreen(
            first["id"], drop=True, keep=lambda r: remember(key, r), sent=answer
        )
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
        """What the server's initialize handler takes from the params, for the check to start with."""
        from ..session import uri_to_path

        folders = params.get("workspaceFolders")
        uris = [f.get("uri") for f in folders if isinstance(f, dict)] if isinstance(folders, list) else []
        if not uris and isinstance(params.get("rootUri"), str):
            uris = [params["rootUri"]]
        session.folders = [str(p) for p in (uri_to_path(u) for u in uris if isinstance(u, str)) if p]
        info = params.get("clientInfo")
        session.client_name = str(info.get("name") or "") if isinstance(info, dict) else ""
        encoding = answer["capabilities"].get("positionEncoding")
        session.encoding = encoding if isinstance(encoding, str) else "utf-16"
        self._apply(session, params.get("initializationOptions") or {})

    def _apply(self, session: Session, settings: object) -> None:
        session.apply_settings(settings)
        self.handover.settings = settings

    def _pull_settings(self) -> object | None:
        """The client's `kinMemory` settings ({} when it has none); None when it did not answer in time."""
        request = {"jsonrpc": "2.0", "id": SETTINGS_ID, "method": "workspace/configuration",
                   "params": {"items": [{"section": "kinMemory"}]}}  # fmt: skip
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
                result = message.get("result")
                return (
                    result[0] if isinstance(result, list) and result and isinstance(result[0], dict) else {}
                )
            self.handover.received.append(body)

    def _start_check(self, handled: int) -> None:
        shards, session = self.shards, self.session
        if shards is None or session is None:
            return
        from .strategy import check_in_front

        future: Future = Future()
        future.set_running_or_notify_cancel()

        def run() -> None:
            try:
                future.set_result(check_in_front(session, shards, self.outlet, self.handover.recall_synced))
            except BaseException as exc:  # noqa: BLE001 - the server then checks as usual
                future.set_exception(exc)

        threading.Thread(target=run, name="kin-memory-start-check", daemon=True).start()
        self.handover.check = future
        self.handover.shards = None

        from .early import EarlySearch

        handover = self.handover
        handover.early = EarlySearch(session, self.reader, self.outlet, handover.received, handled, future,
                                     handover.recall_synced)  # fmt: skip
        handover.early.start()


def _is_id(value: object) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _capability(params: dict, *path: str) -> bool:
    node: object = params.get("capabilities")
    for name in path:
        node = node.get(name) if isinstance(node, dict) else None
    return bool(node)
