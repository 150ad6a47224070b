"""The memory tool over LSP: `kin.memory.tool`.

The shell adds what only an editor has: strict-mode confirmation (`window/showMessageRequest`) and, for a
file open in the editor, the edit sent as `workspace/applyEdit` (buffer and undo stay in sync) before the
same bytes are written to disk. The tool itself runs in a worker thread; client round trips are scheduled
back onto the event loop.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from lsprotocol import types as lsp

from .convert import col_to_client
from .features import external_change
from .server import KinMemoryServer, uri_to_path

CLIENT_TIMEOUT = 300.0  # seconds a user may take to answer a confirmation
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def split_lsp_lines(text: str) -> list[str]:
    """Lines as LSP counts them (\\n, \\r\\n, \\r), each keeping its line break."""
    return _LINE.findall(text)


def line_edit(old: str, new: str, encoding: str) -> lsp.TextEdit:
    """One edit replacing only the lines that differ (columns are 0 except at a last unterminated line)."""
    a_lines, b_lines = split_lsp_lines(old), split_lsp_lines(new)
    head = 0
    while head < min(len(a_lines), len(b_lines)) and a_lines[head] == b_lines[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(a_lines), len(b_lines)) - head
        and a_lines[len(a_lines) - 1 - tail] == b_lines[len(b_lines) - 1 - tail]
    ):
        tail += 1
    end_index = len(a_lines) - tail
    if end_index < len(a_lines) or not a_lines or a_lines[-1][-1:] in ("\n", "\r"):
        end = lsp.Position(line=end_index, character=0)
    else:  # the range runs to the end of an unterminated last line
        last = a_lines[-1]
        end = lsp.Position(line=len(a_lines) - 1, character=col_to_client(last, len(last), encoding))
    return lsp.TextEdit(
        range=lsp.Range(start=lsp.Position(line=head, character=0), end=end),
        new_text="".join(b_lines[head : len(b_lines) - tail]),
    )


class LspEditor:
    """The tool's Editor (tool.commands.Editor) backed by the client's open documents."""

    def __init__(self, ls: KinMemoryServer, loop: asyncio.AbstractEventLoop) -> None:
        self.ls = ls
        self.loop = loop

    def _on_loop(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=CLIENT_TIMEOUT)

    def _find(self, path: Path) -> tuple[str, str, object] | None:
        target = os.path.realpath(path)
        for uri, doc in list(self.ls.workspace.text_documents.items()):
            p = uri_to_path(uri)
            if p is not None and os.path.realpath(p) == target:
                return uri, doc.source, doc.version
        return None

    def buffer(self, path: Path) -> tuple[str, object] | None:
        async def look():
            return self._find(path)

        found = self._on_loop(look())
        return None if found is None else (found[1], found[2])

    def apply(self, path: Path, version: object, old_text: str, new_text: str) -> bool:
        async def send() -> bool:
            found = self._find(path)
            if found is None:
                return False
            uri = found[0]
            edit = lsp.WorkspaceEdit(
                document_changes=[
                    lsp.TextDocumentEdit(
                        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                        edits=[line_edit(old_text, new_text, self.ls.encoding)],
                    )
                ]
            )
            result = await self.ls.workspace_apply_edit_async(
                lsp.ApplyWorkspaceEditParams(edit=edit, label="Memory tool")
            )
            return bool(result and result.applied)

        return self._on_loop(send())


def tool_mode(ls: KinMemoryServer) -> str:
    mode = ls.config.get("toolMode", "auto")
    return mode if mode in ("auto", "strict", "plan") else "auto"


def register(server: KinMemoryServer) -> None:
    try:
        from ..tool.cli import settings_label
        from ..tool.commands import ToolContext, run_tool
    except ImportError:  # the tool package is optional in a partial install
        return

    @server.command("kin.memory.tool")
    async def tool(ls: KinMemoryServer, args: dict) -> dict:
        if not isinstance(args, dict) or "command" not in args:
            from pygls.exceptions import JsonRpcInvalidParams

            raise JsonRpcInvalidParams("missing required key: command")
        from ..store.settings import effective_settings

        ctx = ls.context()
        settings = effective_settings(list(ctx.active))
        loop = asyncio.get_running_loop()

        def confirm(description: str) -> bool:
            fut = asyncio.run_coroutine_threadsafe(
                ls.window_show_message_request_async(
                    lsp.ShowMessageRequestParams(
                        type=lsp.MessageType.Warning,
                        message=f"Memory tool wants to {description}. Allow?",
                        actions=[lsp.MessageActionItem(title="Allow"), lsp.MessageActionItem(title="Deny")],
                    )
                ),
                loop,
            )
            answer = fut.result(timeout=CLIENT_TIMEOUT)
            return bool(answer and answer.title == "Allow")

        tctx = ToolContext(
            root=ls.root,
            workspace=ctx.active[0] if ctx.active else None,
            mode=tool_mode(ls),
            enabled=settings.memory_enabled,
            disabled_by=settings_label(settings.disabled_by),
            confirm=confirm,
            editor=LspEditor(ls, loop),
        )
        result = await loop.run_in_executor(None, run_tool, args, tctx)
        if not result.is_error:
            for key in ("path", "old_path", "new_path"):
                value = args.get(key)
                if isinstance(value, str) and value.startswith("/memories/"):
                    external_change(ls, ls.root / value[len("/memories/") :])
        return {"content": result.content, "isError": result.is_error}
