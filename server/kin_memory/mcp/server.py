"""The MCP server: tools `memory` and `memory_search`, resource `memory://prompt-block`, over stdio.

Built on the official `mcp` SDK's low-level server, which serves both eras of the protocol: the
handshake era (`initialize`; the server may send requests to the client: `roots/list`,
`elicitation/create`) and the 2026 era (no server requests: a call answers `input_required` with the
requests embedded and the client retries with the answers). The workspace and strict mode's consent are
asked for in whichever way the connection speaks; a client that declares no roots gets the working
directory's workspace, and one that cannot elicit gets strict mode's refusal.

The store work itself is `agents.AgentStore` (plain core, run on a worker thread).
"""

from __future__ import annotations

import hashlib
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.to_thread
from anyio import from_thread
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .. import __version__
from ..tool import messages
from . import schema
from .agents import AgentStore, Answer, consent_question, needs_consent
from .frames import Screened, wire_stdin
from .roots import workspace_from_roots

ROOTS_TTL = 5.0  # seconds: the 2026 era has no roots/list_changed, so roots are asked again after this
ROOTS_KEY = "roots"
CONSENT_KEY = "consent"
CONSENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"allow": {"type": "boolean", "title": "Allow this memory change", "default": False}},
    "required": ["allow"],
}

Context = ServerRequestContext[Any, Any]


def _get(obj: object, name: str) -> Any:
    """A field of an answer the client sent, typed by the SDK or left as a plain mapping."""
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def _allowed(answer: object) -> bool:
    """An elicitation answer says yes: accepted, with `allow` checked."""
    content = _get(answer, "content")
    return (
        _get(answer, "action") == "accept" and isinstance(content, Mapping) and content.get("allow") is True
    )


def _root_uris(answer: object) -> list[str]:
    return [str(_get(r, "uri")) for r in (_get(answer, "roots") or [])]


def _modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _text(answer: Answer) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=answer.text)], is_error=answer.is_error)


@dataclass
class Roots:
    """The workspace from the client's roots, kept until the client says they changed (handshake era)
    or for ROOTS_TTL (2026 era)."""

    root: Path
    fallback: str | None  # the working directory's workspace
    workspace: str | None = None
    asked_at: float | None = None
    modern: bool = False

    def current(self) -> bool:
        if self.asked_at is None:
            return False
        return not self.modern or time.monotonic() - self.asked_at < ROOTS_TTL

    def set(self, uris: list[str], modern: bool) -> str | None:
        self.workspace = workspace_from_roots(uris, self.root) or self.fallback
        self.asked_at, self.modern = time.monotonic(), modern
        return self.workspace

    def changed(self) -> None:
        self.asked_at = None


@dataclass
class Call:
    """One request's needs: what the client must still answer (2026 era) before it can run."""

    ctx: Context
    responses: Mapping[str, object]
    state: str | None = None  # the request state the client echoed on a retry
    needed: dict[str, Any] = field(default_factory=dict)
    new_state: str | None = None

    def input_required(self) -> types.InputRequiredResult:
        return types.InputRequiredResult(input_requests=self.needed, request_state=self.new_state)


class MemoryServer:
    """The handlers, over one AgentStore. `workspace`: a fixed workspace (the --workspace option), which
    the client's roots never override; `...` (Ellipsis) when not given."""

    def __init__(self, store: AgentStore, fallback: str | None, workspace: object = ...) -> None:
        self.store = store
        self.fixed = workspace
        self.roots = Roots(store.root, fallback)

    def build(self) -> Server[Any]:
        server: Server[Any] = Server(
            "kin-memory",
            version=__version__,
            instructions=schema.INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_read_resource=self.read_resource,
        )
        server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self.roots_changed
        )
        return server

    # -- the active workspace ------------------------------------------------------------------------
    async def workspace(self, call: Call) -> str | None:
        if self.fixed is not ...:
            return self.fixed  # type: ignore[return-value]  # str | None, set from the command line
        ctx = call.ctx
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None:
            return self.roots.fallback
        if self.roots.current() or (call.state is not None and self.roots.asked_at is not None):
            return self.roots.workspace  # a retry (the person was answering a question) keeps its roots
        if _modern(ctx):
            answer = call.responses.get(ROOTS_KEY)
            if answer is None:
                call.needed[ROOTS_KEY] = types.ListRootsRequest()
                return self.roots.fallback  # not used: the call answers input_required first
            return self.roots.set(_root_uris(answer), True)
        try:
            with warnings.catch_warnings():  # roots are deprecated in the 2026 era, not in this one
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                result = await ctx.session.list_roots()
        except Exception:  # noqa: BLE001 - a client that fails to answer: the working directory's workspace
            return self.roots.fallback
        return self.roots.set(_root_uris(result), False)

    async def roots_changed(self, _ctx: Context, _params: object) -> None:
        self.roots.changed()

    # -- strict mode's consent -----------------------------------------------------------------------
    def consent(self, call: Call, args: dict[str, object]) -> Callable[[str], bool] | Answer | None:
        """How this call asks the person (a confirm callback), or the refusal when it cannot; None when
        nothing needs asking."""
        if not needs_consent(self.store.mode, args):
            return None
        ctx = call.ctx
        caps = ctx.session.client_capabilities
        if caps is None or caps.elicitation is None:
            command, path = str(args.get("command")), args.get("path", args.get("old_path"))
            return Answer(messages.cannot_ask(command, str(path)), True)
        question = consent_question(args)
        if _modern(ctx):
            # The retry carries the answer and the state we sent with the question: an answer is taken
            # only for this very question (the same call retried), never for another.
            bound = "consent:" + hashlib.sha256(question.encode("utf-8", "surrogatepass")).hexdigest()
            answer = call.responses.get(CONSENT_KEY)
            if answer is None or call.state != bound:
                params = types.ElicitRequestFormParams(message=question, requested_schema=CONSENT_SCHEMA)
                call.needed[CONSENT_KEY] = types.ElicitRequest(params=params)
                call.new_state = bound
                return None
            allowed = _allowed(answer)
            return lambda _description: allowed

        async def ask() -> bool:
            answer = await ctx.session.elicit_form(
                message=question, requested_schema=CONSENT_SCHEMA, related_request_id=ctx.request_id
            )
            return _allowed(answer)

        def confirm(_description: str) -> bool:  # on the tool's worker thread
            return bool(from_thread.run(ask))

        return confirm

    # -- handlers ------------------------------------------------------------------------------------
    async def list_tools(self, _ctx: Context, _params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=schema.tools())

    async def call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        call = Call(ctx, params.input_responses or {}, params.request_state)
        args = dict(params.arguments or {})
        workspace = await self.workspace(call)
        if params.name == schema.MEMORY:
            # a disabled store is refused before anyone is asked
            enabled = await anyio.to_thread.run_sync(lambda: self.store.refusal(workspace) is None)
            consent = self.consent(call, args) if enabled else None
            if call.needed:
                return call.input_required()
            if isinstance(consent, Answer):
                return _text(consent)
            confirm = consent
            cancel = threading.Event()

            def run() -> Answer:
                result = self.store.tool(args, workspace, confirm, cancel.is_set)
                return Answer(result.content, result.is_error)

            try:  # a cancel lets the worker see it at once: a write not begun yet is then not made
                return _text(await anyio.to_thread.run_sync(run, abandon_on_cancel=True))
            except anyio.get_cancelled_exc_class():
                cancel.set()
                raise
        if call.needed:
            return call.input_required()
        if params.name == schema.SEARCH:
            query, limit = args.get("query"), args.get("limit")
            return _text(await anyio.to_thread.run_sync(lambda: self.store.search(query, limit, workspace)))
        return _text(
            Answer(f"Unknown tool {params.name}: this server has {schema.MEMORY} and {schema.SEARCH}", True)
        )

    async def list_resources(self, _ctx: Context, _params: object) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[schema.prompt_block_resource()])

    async def read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        if str(params.uri) != schema.PROMPT_BLOCK_URI:
            raise MCPError(
                INVALID_PARAMS, f"Unknown resource {params.uri}: this server has {schema.PROMPT_BLOCK_URI}"
            )
        call = Call(ctx, params.input_responses or {}, params.request_state)
        workspace = await self.workspace(call)
        if call.needed:
            return call.input_required()
        answer = await anyio.to_thread.run_sync(lambda: self.store.prompt_block(workspace))
        if answer.is_error:
            raise MCPError(INVALID_REQUEST, answer.text)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=schema.PROMPT_BLOCK_URI, mime_type="text/markdown", text=answer.text
                )
            ]
        )


def serve(store: AgentStore, fallback: str | None, workspace: object = ...) -> None:
    """Serve one client over stdin/stdout until it closes the connection."""
    server = MemoryServer(store, fallback, workspace).build()

    async def main() -> None:
        # the client's lines pass the screen first: one the SDK cannot read is answered, not dropped
        lines = Screened(wire_stdin())
        async with stdio_server(stdin=cast(Any, lines)) as (read, write):
            lines.answer_to(cast(Any, write))
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
