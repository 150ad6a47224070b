"""`kin.memory.reflect` over LSP: one bounded pass, reviewed in the editor before anything is written.

The pass runs off the loop (reflect/run.py) against a staging copy; its changes come back as a
WorkspaceEdit whose every operation carries a change annotation with needsConfirmation, so VS Code shows
its refactor preview. `apply: false` only returns the change list.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from . import frames
from .server import KinMemoryServer, uri_to_path

ANNOTATION = "kin-memory-reflection"


def register(server: KinMemoryServer) -> None:
    @server.command("kin.memory.reflect")
    async def reflect_command(ls: KinMemoryServer, args: dict) -> dict:
        from ..reflect import config as cfg
        from ..reflect import transcript as transcripts
        from ..reflect.run import Cancelled, reflect
        from ..store.settings import effective_settings
        from ..tool import messages

        if not isinstance(args, dict) or not isinstance(args.get("transcript"), str):
            raise JsonRpcInvalidParams("missing required key: transcript (a path or file URI)")
        apply = args.get("apply", True) is not False
        ctx = ls.context()
        settings = effective_settings(list(ctx.active))
        if not settings.memory_enabled:
            raise ValueError(messages.disabled(settings.disabled_by))
        config = cfg.from_settings(
            ls.config.get("reflection") if isinstance(ls.config.get("reflection"), dict) else None
        )
        try:
            cfg.check(config)
            key = cfg.api_key(config)
            source = _transcript_path(args["transcript"])
            transcript = transcripts.read(source, args["transcript"])
        except (cfg.ConfigError, transcripts.TranscriptError) as exc:
            raise ValueError(str(exc)) from None
        workspace = ctx.active[0] if len(ctx.active) == 1 else None
        token = f"kin-memory-reflect-{time.monotonic_ns()}"
        progress = await _begin(ls, token)
        loop = asyncio.get_running_loop()

        def say(message: str) -> None:
            if progress:
                loop.call_soon_threadsafe(
                    ls.work_done_progress.report, token, lsp.WorkDoneProgressReport(message=message)
                )

        def cancelled() -> bool:
            future = ls.work_done_progress.tokens.get(token) if progress else None
            return bool(future is not None and future.cancelled())

        try:
            outcome = await loop.run_in_executor(
                None,
                lambda: reflect(
                    ls.root, transcript, config, key, workspace, cancelled=cancelled, progress=say
                ),
            )
        except Cancelled:
            _end(ls, token, progress, "cancelled")
            return {"summary": "Reflection cancelled; nothing applied.", "changes": [], "applied": False}
        changes = [c.to_json() for c in outcome.changes]
        applied = False
        if apply and outcome.reviewable:
            say("waiting for your review of the changes")
            edit = workspace_edit(ls, outcome.changes, outcome.summary)
            result = await ls.workspace_apply_edit_async(
                lsp.ApplyWorkspaceEditParams(edit=edit, label="Memory reflection")
            )
            applied = bool(result and result.applied)
        _end(ls, token, progress, "applied" if applied else "done")
        summary = outcome.summary + (
            ""
            if not apply or not outcome.reviewable
            else " Applied in the editor."
            if applied
            else " Declined: nothing applied."
        )
        return {"summary": summary, "changes": changes, "applied": applied}


def _transcript_path(value: str) -> Path:
    if value.startswith("file:"):
        path = uri_to_path(value)
        if path is None:
            raise JsonRpcInvalidParams("transcript: not a file URI")
        return path
    return Path(value).expanduser()


def workspace_edit(ls: KinMemoryServer, changes: list, summary: str) -> lsp.WorkspaceEdit:
    """The staged changes as document changes, each annotated as needing the user's confirmation."""
    ops: list = []
    for c in changes:
        uri = ls.uri_of(c.path)
        if c.kind == "create":
            ops.append(
                lsp.CreateFile(
                    uri=uri,
                    options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=False),
                    annotation_id=ANNOTATION,
                )
            )
            ops.append(_replace_all(uri, "", (c.after or b"").decode("utf-8", "replace"), ls.encoding))
        elif c.kind == "edit":
            ops.append(
                _replace_all(
                    uri,
                    (c.before or b"").decode("utf-8", "replace"),
                    (c.after or b"").decode("utf-8", "replace"),
                    ls.encoding,
                )
            )
        elif c.kind == "rename":
            ops.append(
                lsp.RenameFile(
                    old_uri=ls.uri_of(c.old_path),
                    new_uri=uri,
                    options=lsp.RenameFileOptions(overwrite=False),
                    annotation_id=ANNOTATION,
                )
            )
        elif c.kind == "delete":
            ops.append(
                lsp.DeleteFile(
                    uri=uri, options=lsp.DeleteFileOptions(recursive=c.is_dir), annotation_id=ANNOTATION
                )
            )
    annotation = lsp.ChangeAnnotation(label="Memory reflection", needs_confirmation=True, description=summary)
    return lsp.WorkspaceEdit(document_changes=ops, change_annotations={ANNOTATION: annotation})


def _replace_all(uri: str, before: str, after: str, encoding: str) -> lsp.TextDocumentEdit:
    lines = before.replace("\r\n", "\n").split("\n")
    end = lsp.Position(
        line=len(lines) - 1, character=frames.col_to_client(lines[-1], len(lines[-1]), encoding)
    )
    edit = lsp.AnnotatedTextEdit(
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=end),
        new_text=after,
        annotation_id=ANNOTATION,
    )
    return lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=[edit]
    )


async def _begin(ls: KinMemoryServer, token: str) -> bool:
    caps = ls.client_caps
    if not (caps.window and caps.window.work_done_progress):
        return False
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), 5)
    except Exception:  # noqa: BLE001 - no progress UI is no reason to fail the pass
        return False
    ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title="Memory reflection", cancellable=True))
    return True


def _end(ls: KinMemoryServer, token: str, progress: bool, message: str) -> None:
    if progress:
        ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=message))
