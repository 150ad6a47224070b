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
from pygls.lsp.server import LanguageServer

from ... import protocol
from ...store.home import home_relative
from ...store.root import VIRTUAL_ROOT
from ...tool.commands import ToolContext, run_tool
from ..convert import col_to_client
from ..features.documents import Documents
from ..scheduler import Scheduler
from ..session import Session, uri_to_path
from .base import Handler

CLIENT_TIMEOUT = 300.0  # seconds a user may take to answer a confirmation
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
PATH_KEYS = ("path", "old_path", "new_path")


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
    while (tail < min(len(a_lines), len(b_lines)) - head
           and a_lines[len(a_lines) - 1 - tail] == b_lines[len(b_lines) - 1 - tail]):  # fmt: skip
        tail += 1
    end_index = len(a_lines) - tail
    if end_index < len(a_lines) or not a_lines or a_lines[-1][-1:] in ("\n", "\r"):
        end = lsp.Position(line=end_index, character=0)
    else:  # the range runs to the end of an unterminated last line
        last = a_lines[-1]
        end = lsp.Position(line=len(a_lines) - 1, character=col_to_client(last, len(last), encoding))
    return lsp.TextEdit(range=lsp.Range(start=lsp.Position(line=head, character=0), end=end),
                        new_text="".join(b_lines[head : len(b_lines) - tail]))  # fmt: skip


class LspEditor:
    """The tool's Editor (tool.commands.Editor) backed by the client's open documents."""

    def __init__(self, server: LanguageServer, session: Session, loop: asyncio.AbstractEventLoop) -> None:
        self.server = server
        self.session = session
        self.loop = loop

    def _on_loop(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=CLIENT_TIMEOUT)

    def _find(self, path: Path) -> tuple[str, str, object] | None:
        target = os.path.realpath(path)
        for uri, doc in list(self.server.workspace.text_documents.items()):
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
            document = lsp.OptionalVersionedTextDocumentIdentifier(uri=found[0], version=version)  # type: ignore[arg-type]  # the buffer's own version
            edit = lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
                text_document=document, edits=[line_edit(old_text, new_text, self.session.encoding)])])  # fmt: skip
            params = lsp.ApplyWorkspaceEditParams(edit=edit, label="Memory tool")
            result = await self.server.workspace_apply_edit_async(params)
            return bool(result and result.applied)

        return self._on_loop(send())


class ToolCommand:
    def __init__(self, session: Session, scheduler: Scheduler, documents: Documents) -> None:
        self.session = session
        self.scheduler = scheduler
        self.documents = documents
        self.server: LanguageServer | None = None

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        self.server = server
        return {
            "kin.memory.tool": self.run,
        }

    async def run(self, params: protocol.ToolParams) -> protocol.ToolResult:
        assert self.server is not None
        loop = asyncio.get_running_loop()
        settings = await self.scheduler.run(self.session.file_settings)
        active = () if params.workspace == "none" else self.session.active()
        context = ToolContext(root=self.session.root, workspace=active[0] if active else None,
                              visible_from=active,
                              mode=self.session.settings.tool_mode, enabled=settings.memory_enabled,
                              disabled_by=home_relative(settings.disabled_by), confirm=self._confirmer(loop),
                              editor=LspEditor(self.server, self.session, loop))  # fmt: skip
        result = await self.scheduler.run(run_tool, params.input, context)
        if not result.is_error:
            for key in PATH_KEYS:
                value = params.input.get(key)
                if isinstance(value, str) and value.startswith(VIRTUAL_ROOT + "/"):
                    self.documents.external_change(self.session.path_of(value))
        return protocol.ToolResult(content=result.content, is_error=result.is_error)

    def _confirmer(self, loop: asyncio.AbstractEventLoop):
        server = self.server
        assert server is not None

        def confirm(description: str) -> bool:
            request = lsp.ShowMessageRequestParams(
                type=lsp.MessageType.Warning, message=f"Memory tool wants to {description}. Allow?",
                actions=[lsp.MessageActionItem(title="Allow"), lsp.MessageActionItem(title="Deny")])  # fmt: skip
            answer = asyncio.run_coroutine_threadsafe(server.window_show_message_request_async(request), loop)
            reply = answer.result(timeout=CLIENT_TIMEOUT)
            return bool(reply and reply.title == "Allow")

        return confirm
