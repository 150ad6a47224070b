"""Typed command registration: arguments structured from `protocol`, results unstructured through it.

A bad argument is InvalidParams naming the key; a refusal the user should read is `CommandFailed` (its
message is a sentence, shown as is); anything unexpected is logged with its traceback and reported as a
sentence too, never as a Python exception name.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

log = logging.getLogger("kin_memory.lsp")


class CommandFailed(JsonRpcInternalError):
    """The command could not do what was asked; the message says why, in the user's terms."""

    def __init__(self, message: str) -> None:
        super().__init__(message=message)


Handler = Callable[[Any], Awaitable[Any]]


def workspace_arg(value: str) -> tuple[str, ...]:
    """A command's `workspace` argument read as every workspace value is (labels verbatim, absolute
    paths canonical, `none` the operator's view); a relative path or an unsafe label is refused."""
    from ...store.workspace import WorkspaceValueError, workspace_value

    try:
        return workspace_value(value)
    except WorkspaceValueError as exc:
        raise CommandFailed(str(exc)) from None


class CommandGroup(Protocol):
    def handlers(self, server: LanguageServer) -> Mapping[str, Handler]: ...


class LazyCommands:
    """A command group whose module is imported on the first call of one of its commands. The names are
    registered at once (the editor learns them from `initialize`), but the code behind them (proposals,
    reflection, the tool, cattrs) is not loaded before the server can answer `initialize`."""

    def __init__(self, names: tuple[str, ...], build: Callable[[], CommandGroup]) -> None:
        self.names = names
        self.build = build
        self._handlers: Mapping[str, Handler] | None = None
        self._server: LanguageServer | None = None

    def register(self, server: LanguageServer) -> None:
        self._server = server
        for name in self.names:
            register_command(server, name, self._caller(name))

    def handlers(self) -> Mapping[str, Handler]:
        if self._handlers is None:
            assert self._server is not None
            self._handlers = self.build().handlers(self._server)
        return self._handlers

    def _caller(self, name: str) -> Handler:
        async def call(params: Any) -> Any:
            return await self.handlers()[name](params)

        return call


# Commands that change memories, the settings or what was reviewed. The server runs commands concurrently,
# but one sent after such a command sees what it did: a search sent right after a tool write (without
# waiting for its answer) finds what was written. Model passes are not waited for (they only propose), nor
# a reindex (it changes no memory, takes a minute at 100k, and search already waits for the index).
WRITES = frozenset({
    "kin.memory.tool", "kin.memory.applyProposal", "kin.memory.sweep", "kin.memory.markReviewed",
    "kin.memory.restore", "kin.memory.acceptChanges", "kin.memory.revertChanges",
    "kin.memory.setMemoryEnabled",
})  # fmt: skip
WRITE_WAIT = 30.0  # seconds a command waits for the writes sent before it


class WriteOrder:
    """The writing commands still running, in the order they came (each a future done when it ends)."""

    def __init__(self) -> None:
        self.running: list[asyncio.Future[None]] = []

    def begin(self, writes: bool) -> tuple[list[asyncio.Future[None]], asyncio.Future[None] | None]:
        """On arrival (commands start in the order they came): the writes to wait for, and this one's
        future when it writes."""
        self.running = [f for f in self.running if not f.done()]
        earlier = list(self.running)
        mine = asyncio.get_running_loop().create_future() if writes else None
        if mine is not None:
            self.running.append(mine)
        return earlier, mine


def register_command(server: LanguageServer, name: str, handler: Handler) -> None:
    order: WriteOrder = server.__dict__.setdefault("kin_write_order", WriteOrder())

    async def run(ls: LanguageServer, *args: Any) -> Any:
        earlier, mine = order.begin(name in WRITES)
        try:
            if earlier:
                await asyncio.wait(earlier, timeout=WRITE_WAIT)
            return await _run(args)
        finally:
            if mine is not None:
                mine.set_result(None)

    async def _run(args: tuple[Any, ...]) -> Any:
        from ... import protocol  # cattrs and the command types: loaded with the first command

        spec = protocol.BY_NAME[name]
        try:
            params: Any = protocol.parse(spec.params, args[0] if args else None)
        except protocol.ProtocolError as exc:
            raise JsonRpcInvalidParams(f"{name}: {exc}") from None
        try:
            result = await handler(params)
        except JsonRpcException:
            raise
        except Exception:
            log.exception("%s failed", name)
            raise CommandFailed(
                f"{name} failed because of an internal error; the server log has the details."
            ) from None
        return protocol.dump(result)

    # pygls resolves a command handler's annotations on each call to structure its arguments (ours are
    # parsed above): with none to resolve, a command no longer pays for typing.get_type_hints.
    run.__annotations__ = {}
    server.command(name)(run)
