"""Code actions: the quick fixes of the findings under the cursor.

Each action's diagnostic is the very dict the publisher sent (same serializer), structured into
lsprotocol's type, so the client matches it to what it shows. "Delete this memory" is the editor's own
command `kinMemory.confirmDelete {uri, path}`: the editor asks, then deletes through the memory tool.
A moved repository's stamp (KM301) is looked for when its actions are asked (git runs off the event
loop): its new path, when found, is the first and preferred fix.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...findings.model import Finding, Fix
from ...findings.workspace import repointed
from ...store.workspace import own_workspaces
from ...store.workspace_aliases import new_homes
from ..convert import range_json
from ..handlers import handler
from ..scheduler import Scheduler
from ..session import Session
from .diagnostics import Diagnostics

# Handled by the editor, not the server: a confirmation, then `kin.memory.tool {command: "delete", path}`.
CONFIRM_DELETE = "kinMemory.confirmDelete"
RESTAMP = "kinMemory.restamp"
COMPARE_CONFLICT = "kinMemory.compareConflict"
FIX_ALL = lsp.CodeActionKind.SourceFixAll + ".kinMemory"  # source.fixAll.kinMemory


class CodeActions:
    def __init__(self, session: Session, diagnostics: Diagnostics, converter, scheduler: Scheduler) -> None:
        self.session = session
        self.diagnostics = diagnostics
        self.converter = converter  # lsprotocol's cattrs converter (the server's)
        self.scheduler = scheduler

    def register(self, server: LanguageServer) -> None:
        options = lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL])
        server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, options)(handler(self.actions))

    async def actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        vpath = self.session.vpath_of(uri)
        memory = self.session.store.get(vpath) if vpath else None
        if vpath is None or memory is None:
            return []
        version = self.diagnostics.versions(uri)
        only = params.context.only or []
        if only and not any(lsp.CodeActionKind.QuickFix.startswith(k) for k in only):
            # a source action request: the file's safe fixes in one edit, when asked for
            if any(FIX_ALL.startswith(k) for k in only):
                return self.fix_all(memory, uri, version)
            return []
        findings = self.diagnostics.findings_for(vpath) + self.diagnostics.extra("sync", vpath)
        out = []
        for finding, data in zip(findings, self.diagnostics.to_json(findings, memory.lines), strict=True):
            diagnostic = self.converter.structure(data, lsp.Diagnostic)
            if _overlaps(diagnostic.range, params.range):
                fixes = finding.fixes
                if finding.code == "KM301" and isinstance(memory.stamp, str):
                    fixes = await self.scheduler.run(self.moved_fixes, finding, memory.stamp)
                out += [self.action(fix, diagnostic, uri, version, memory.lines) for fix in fixes]
        return out

    def moved_fixes(self, finding: Finding, stamp: str) -> tuple[Fix, ...]:
        """KM301's fixes with the repository's new path first when it is found among the editor's own
        workspaces, this machine's recorded repositories and the folders other memories are stamped
        with (the agent stamps what it writes in the moved repository with its new path)."""
        ctx = self.session.context()
        stamped = {m.stamp for m in self.session.store.memories() if isinstance(m.stamp, str)}
        folders = [s for s in stamped if s.startswith("/") and s != stamp and os.path.isdir(s)]
        candidates = [*own_workspaces(ctx.active, ctx.root), *sorted(folders)]
        return repointed(finding, stamp, new_homes(ctx.root, stamp, candidates))

    def fix_all(self, memory, uri: str, version: int | None) -> list[lsp.CodeAction]:
        """`source.fixAll.kinMemory`: every safe fix of this file (see proposals/bulk.py) as one edit."""
        from ...proposals.bulk import safe_edits  # loaded with the first fix-all

        edits = safe_edits(memory, self.session.context())
        if not edits:
            return []
        document = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        text_edits = [
            lsp.TextEdit(range=self.converter.structure(range_json(e.span, memory.lines, self.session.encoding), lsp.Range),
                         new_text=e.new_text)
            for e in edits
        ]  # fmt: skip
        return [lsp.CodeAction(title="Fix all safe problems (fences, categories)", kind=FIX_ALL,
                               edit=lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=document,
                                                                                             edits=text_edits)]))]  # fmt: skip

    def action(
        self, fix: Fix, diagnostic: lsp.Diagnostic, uri: str, version: int | None, lines: Sequence[str]
    ) -> lsp.CodeAction:
        action = lsp.CodeAction(
            title=fix.title,
            kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            is_preferred=fix.preferred or None,
        )
        if fix.edits:
            edits = [
                lsp.TextEdit(range=self.converter.structure(range_json(e.span, lines, self.session.encoding), lsp.Range),
                             new_text=e.new_text)
                for e in fix.edits
            ]  # fmt: skip
            document = lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            action.edit = lsp.WorkspaceEdit(
                document_changes=[lsp.TextDocumentEdit(text_document=document, edits=edits)]
            )
        elif fix.command == "delete":
            # Never a DeleteFile edit (the editor would apply it at once, around the tool's guard and audit
            # log): a command the editor runs itself, asking first, then deleting through `kin.memory.tool`.
            action.command = lsp.Command(
                title=fix.title,
                command=CONFIRM_DELETE,
                arguments=[{"uri": uri, "path": self.session.vpath_of(uri)}],
            )
        elif fix.command == "restampAll":
            # The editor's own command: it asks where the repository went (unless `to` is given), then
            # reviews the one proposal `kin.memory.restamp` makes for every memory with that stamp.
            action.command = lsp.Command(title=fix.title, command=RESTAMP, arguments=[dict(fix.argument)])
        elif fix.command == "resolveConflict":
            action.command = lsp.Command(
                title=fix.title,
                command="kin.memory.resolveConflict",
                arguments=[{"uri": uri, **dict(fix.argument)}],
            )
        elif fix.command == "compareConflict":
            # The editor's own command: it asks `kin.memory.conflictVersions` and shows both side by side.
            action.command = lsp.Command(title=fix.title, command=COMPARE_CONFLICT, arguments=[{"uri": uri}])
        elif fix.command == "markReviewed":
            action.command = lsp.Command(
                title=fix.title, command="kin.memory.markReviewed", arguments=[{"uri": uri}]
            )
        return action


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return not (key(a.end) < key(b.start) or key(b.end) < key(a.start))
