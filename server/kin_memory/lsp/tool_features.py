"""The memory tool over LSP: `kin.memory.tool`, with strict-mode confirmation through the client."""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp

from .features import external_change
from .server import KinMemoryServer


def register(server: KinMemoryServer) -> None:
    try:
        from ..tool.commands import ToolContext, run_tool
    except ImportError:  # the tool package is optional in a partial install
        return

    @server.command("kin.memory.tool")
    async def tool(ls: KinMemoryServer, args: dict) -> dict:
        if not isinstance(args, dict) or "command" not in args:
            raise ValueError("missing required key: command")
        from ..store.settings import effective_settings

        ctx = ls.context()
        settings = effective_settings(list(ctx.active))
        mode = ls.config.get("toolMode", "auto")
        mode = mode if mode in ("auto", "strict", "plan") else "auto"
        loop = asyncio.get_running_loop()

        def confirm(description: str) -> bool:
            fut = asyncio.run_coroutine_threadsafe(ls.window_show_message_request_async(lsp.ShowMessageRequestParams(
                type=lsp.MessageType.Warning, message=f"Memory tool wants to {description}. Allow?",
                actions=[lsp.MessageActionItem(title="Allow"), lsp.MessageActionItem(title="Deny")])), loop)
            answer = fut.result(timeout=300)
            return bool(answer and answer.title == "Allow")

        tctx = ToolContext(root=ls.root, workspace=ctx.active[0] if len(ctx.active) == 1 else None, mode=mode,
                           enabled=settings.memory_enabled, disabled_by=str(settings.disabled_by) if settings.disabled_by else None,
                           confirm=confirm)
        result = await loop.run_in_executor(None, run_tool, args, tctx)
        for key in ("path", "old_path", "new_path"):
            value = args.get(key)
            if isinstance(value, str) and value.startswith("/memories/"):
                external_change(ls, ls.root / value[len("/memories/"):])
        return {"content": result.content, "isError": result.is_error}
