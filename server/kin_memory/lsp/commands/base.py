"""Typed command registration: arguments structured from `protocol`, results unstructured through it.

A bad argument is InvalidParams naming the key; a refusal the user should read is `CommandFailed` (its
message is a sentence, shown as is); anything unexpected is logged with its traceback and reported as a
sentence too, never as a Python exception name.
"""

from __future__ import annotations

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


def register_command(server: LanguageServer, name: str, handler: Handler) -> None:
    async def run(ls: LanguageServer, *args: Any) -> Any:
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
