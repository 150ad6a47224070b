"""Findings → LSP types, with columns converted to the negotiated position encoding."""

from __future__ import annotations

from lsprotocol import types as lsp

from ..findings.model import Finding, Fix
from ..store.frontmatter import Span
from . import frames

SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}


def col_to_client(line: str, col: int, encoding: str) -> int:
    return frames.col_to_client(line, col, getattr(encoding, "value", encoding))


def col_from_client(line: str, units: int, encoding: str) -> int:
    if encoding == lsp.PositionEncodingKind.Utf32:
        return min(units, len(line))
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        count += (
            len(ch.encode("utf-8", "surrogatepass"))
            if encoding == lsp.PositionEncodingKind.Utf8
            else (2 if ord(ch) > 0xFFFF else 1)
        )
    return len(line)


def to_range(span: Span, lines: tuple[str, ...] | list[str], encoding: str) -> lsp.Range:
    def pos(line: int, col: int) -> lsp.Position:
        text = lines[line] if 0 <= line < len(lines) else ""
        return lsp.Position(line=line, character=col_to_client(text, col, encoding))

    return lsp.Range(start=pos(span.line, span.col), end=pos(span.end_line, span.end_col))


def to_diagnostic(f: Finding, lines, encoding: str, uri_of) -> lsp.Diagnostic:
    related = [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=uri_of(r.vpath), range=to_range(r.span, [], encoding)),
            message=r.message,
        )
        for r in f.related
    ] or None
    return lsp.Diagnostic(
        range=to_range(f.span, lines, encoding),
        message=f.message,
        severity=SEVERITY[f.severity],
        code=f.code,
        source="kin-memory",
        related_information=related,
        data={"code": f.code},
    )


def fix_to_action(
    fix: Fix, f: Finding, diag: lsp.Diagnostic, uri: str, version, lines, encoding: str
) -> lsp.CodeAction:
    action = lsp.CodeAction(
        title=fix.title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diag],
        is_preferred=fix.preferred or None,
    )
    if fix.edits:
        edits = [
            lsp.TextEdit(range=to_range(e.span, lines, encoding), new_text=e.new_text) for e in fix.edits
        ]
        action.edit = lsp.WorkspaceEdit(
            document_changes=[
                lsp.TextDocumentEdit(
                    text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                    edits=edits,
                )
            ]
        )
    elif fix.command == "delete":
        action.edit = lsp.WorkspaceEdit(document_changes=[lsp.DeleteFile(uri=uri)])
    elif fix.command == "markReviewed":
        action.command = lsp.Command(
            title=fix.title, command="kin.memory.markReviewed", arguments=[{"uri": uri}]
        )
    return action
