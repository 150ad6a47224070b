"""Typed command registration: arguments structured from `protocol`, results unstructured through it.

A bad argument is InvalidParams naming the key; a refusal the user should read is `CommandFailed` (its
message is a sentence, shown as is); anything unexpected is logged with its traceback and reported as a
sentence too, never as a Python exception name.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ... import protocol

log = logging.getLogger("kin_memory.lsp")


class CommandFailed(JsonRpcInternalError):
    """The command could not do what was asked; the message says why, in the user's terms."""

    def __init__(self, message: str) -> None:
        super().__init__(message=message)


Handler = Callable[[Any], Awaitable[Any]]


def register_command(server: LanguageServer, name: str, handler: Handler) -> None:
    spec = protocol.BY_NAME[name]

    @server.command(name)
    async def run(ls: LanguageServer, *args: Any) -> Any:
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
