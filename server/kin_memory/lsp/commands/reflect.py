"""`kin.memory.reflect`: one bounded pass, reviewed in the editor before anything is written.

The pass runs off the loop (reflect/run.py) against a staging copy; its changes come back as a
WorkspaceEdit whose every operation carries a change annotation with needsConfirmation, so VS Code shows
its refactor preview. `apply: false` only returns the change list.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ... import protocol
from ...reflect import config as cfg
from ...reflect import transcript as transcripts
from ...reflect.changes import Change
from ...reflect.run import Cancelled, reflect
from ...tool import messages
from ..convert import col_to_client
from ..progress import Progress
from ..session import Session, uri_to_path
from .base import CommandFailed, register_command

ANNOTATION = "kin-memory-reflection"


class ReflectCommand:
    def __init__(self, session: Session, progress: Progress) -> None:
        self.session = session
        self.progress = progress
        self.server: LanguageServer | None = None

    def register(self, server: LanguageServer) -> None:
        self.server = server
        register_command(server, "kin.memory.reflect", self.reflect)

    def config(self) -> cfg.ReflectConfig:
        r = self.session.settings.reflection
        return cfg.ReflectConfig(provider=r.provider, model=r.model, base_url=r.base_url, api_key_env=r.api_key_env,
                                 max_tool_calls=r.max_tool_calls, timeout=r.timeout_seconds)  # fmt: skip

    async def reflect(self, params: protocol.ReflectParams) -> protocol.ReflectResult:
        loop = asyncio.get_running_loop()
        settings = await loop.run_in_executor(None, self.session.file_settings)
        if not settings.memory_enabled:
            raise CommandFailed(messages.disabled(settings.disabled_by))
        config = self.config()
        try:
            cfg.check(config)
            key = cfg.api_key(config)
            source = _transcript_path(params.transcript)
            transcript = await loop.run_in_executor(None, transcripts.read, source, params.transcript)
        except (cfg.ConfigError, transcripts.TranscriptError) as exc:
            raise CommandFailed(str(exc)) from None
        active = self.session.active()
        workspace = active[0] if len(active) == 1 else None
        task = await self.progress.begin("reflect", "Memory reflection", cancellable=True)
        try:
            outcome = await loop.run_in_executor(None, lambda: reflect(
                self.session.root, transcript, config, key, workspace, cancelled=task.cancelled,
                progress=task.report))  # fmt: skip
        except Cancelled:
            task.end("cancelled")
            return protocol.ReflectResult(
                summary="Reflection cancelled; nothing applied.", changes=[], applied=False
            )
        applied = False
        if params.apply and outcome.reviewable:
            task.report("waiting for your review of the changes")
            edit = self.workspace_edit(outcome.changes, outcome.summary)
            assert self.server is not None
            result = await self.server.workspace_apply_edit_async(
                lsp.ApplyWorkspaceEditParams(edit=edit, label="Memory reflection"))  # fmt: skip
            applied = bool(result and result.applied)
        task.end("applied" if applied else "done")
        summary = outcome.summary
        if params.apply and outcome.reviewable:
            summary += " Applied in the editor." if applied else " Declined: nothing applied."
        changes = [_change(c) for c in outcome.changes]
        return protocol.ReflectResult(summary=summary, changes=changes, applied=applied)

    def workspace_edit(self, changes: list[Change], summary: str) -> lsp.WorkspaceEdit:
        """The staged changes as document changes, each annotated as needing the user's confirmation."""
        uri_of, encoding = self.session.uri_of, self.session.encoding
        ops: list = []
        for c in changes:
            uri = uri_of(c.path)
            if c.kind == "create":
                ops.append(lsp.CreateFile(uri=uri, annotation_id=ANNOTATION,
                                          options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=False)))  # fmt: skip
                ops.append(_replace_all(uri, "", _text(c.after), encoding))
            elif c.kind == "edit":
                ops.append(_replace_all(uri, _text(c.before), _text(c.after), encoding))
            elif c.kind == "rename" and c.old_path is not None:
                ops.append(lsp.RenameFile(old_uri=uri_of(c.old_path), new_uri=uri, annotation_id=ANNOTATION,
                                          options=lsp.RenameFileOptions(overwrite=False)))  # fmt: skip
            elif c.kind == "delete":
                ops.append(lsp.DeleteFile(uri=uri, options=lsp.DeleteFileOptions(recursive=c.is_dir),
                                          annotation_id=ANNOTATION))  # fmt: skip
        annotation = lsp.ChangeAnnotation(
            label="Memory reflection", needs_confirmation=True, description=summary
        )
        return lsp.WorkspaceEdit(document_changes=ops, change_annotations={ANNOTATION: annotation})


def _change(c: Change) -> protocol.ReflectChange:
    return protocol.ReflectChange(kind=c.kind, path=c.path, from_path=c.old_path, folder=c.is_dir,  # type: ignore[arg-type]  # Change.kind is one of KINDS
                                  conflict=c.conflict)  # fmt: skip


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


def _transcript_path(value: str) -> Path:
    if value.startswith("file:"):
        path = uri_to_path(value)
        if path is None:
            raise JsonRpcInvalidParams("transcript: not a file URI")
        return path
    return Path(value).expanduser()


def _replace_all(uri: str, before: str, after: str, encoding: str) -> lsp.TextDocumentEdit:
    lines = before.replace("\r\n", "\n").split("\n")
    end = lsp.Position(line=len(lines) - 1, character=col_to_client(lines[-1], len(lines[-1]), encoding))
    edit = lsp.AnnotatedTextEdit(range=lsp.Range(start=lsp.Position(line=0, character=0), end=end), new_text=after,
                                 annotation_id=ANNOTATION)  # fmt: skip
    document = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None)
    return lsp.TextDocumentEdit(text_document=document, edits=[edit])
