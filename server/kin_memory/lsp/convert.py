"""The one serializer from findings to LSP diagnostics, with columns in the negotiated position encoding.

Diagnostics are built as JSON-ready dicts: the bulk paths (the whole-store check at startup, the
cold-start workers that never import lsprotocol) frame them directly, because structuring thousands of
attrs objects through cattrs cost more than the check itself. Code actions get the very same dicts,
structured into lsprotocol types, so what is published and what a quick fix refers to cannot differ.
This module must stay importable without lsprotocol (the workers import it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from ..findings.model import Finding
from ..store.frontmatter import Span

PUBLISH_DIAGNOSTICS = "textDocument/publishDiagnostics"
SEVERITY_NUMBER = {"error": 1, "warning": 2, "information": 3, "hint": 4}
SOURCE = "kin-memory"

LinesOf = Callable[[str], Sequence[str]]  # vpath → that file's lines (for related-information ranges)
UriOf = Callable[[str], str]


def col_to_client(line: str, col: int, encoding: str) -> int:
    """A code-point column as the client counts it ("utf-8", "utf-16" or "utf-32")."""
    head = line[:col]
    if encoding == "utf-8":
        return len(head.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(head)
    return len(head.encode("utf-16-le", "surrogatepass")) // 2


def col_from_client(line: str, units: int, encoding: str) -> int:
    """The code-point column of a client position."""
    if encoding == "utf-32":
        return min(units, len(line))
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        count += (
            len(ch.encode("utf-8", "surrogatepass"))
            if encoding == "utf-8"
            else (2 if ord(ch) > 0xFFFF else 1)
        )
    return len(line)


def position_json(lines: Sequence[str], line: int, col: int, encoding: str) -> dict:
    text = lines[line] if 0 <= line < len(lines) else ""
    return {"line": line, "character": col if text.isascii() else col_to_client(text, col, encoding)}


def range_json(span: Span, lines: Sequence[str], encoding: str) -> dict:
    return {
        "start": position_json(lines, span.line, span.col, encoding),
        "end": position_json(lines, span.end_line, span.end_col, encoding),
    }


def _no_lines(_vpath: str) -> Sequence[str]:
    return ()


def diagnostic_json(
    f: Finding, lines: Sequence[str], encoding: str, uri_of: UriOf, lines_of: LinesOf = _no_lines
) -> dict:
    out: dict = {
        "range": range_json(f.span, lines, encoding),
        "message": f.message,
        "severity": SEVERITY_NUMBER[f.severity],
        "code": f.code,
        "source": SOURCE,
    }
    if f.related:
        out["relatedInformation"] = [
            {
                "location": {
                    "uri": uri_of(r.vpath),
                    "range": range_json(r.span, lines_of(r.vpath), encoding),
                },
                "message": r.message,
            }
            for r in f.related
        ]
    return out


def diagnostics_json(
    findings: Sequence[Finding],
    lines: Sequence[str],
    encoding: str,
    uri_of: UriOf,
    lines_of: LinesOf = _no_lines,
) -> list[dict]:
    return [diagnostic_json(f, lines, encoding, uri_of, lines_of) for f in findings]


# ASCII (ensure_ascii), so len() is the byte count; no spaces: a start sends tens of megabytes. One encoder
# for all: json.dumps with options makes a new one per call, a tenth of a cold check's framing.
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def frame(message: dict) -> bytes:
    body = _ENCODE(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


_json_string = json.encoder.encode_basestring_ascii  # what _ENCODE makes of a str
_PUBLISH_HEAD = '{"jsonrpc":"2.0","method":"' + PUBLISH_DIAGNOSTICS + '","params":{"uri":'


def _position_text(lines: Sequence[str], line: int, col: int, encoding: str) -> str:
    text = lines[line] if 0 <= line < len(lines) else ""
    character = col if text.isascii() else col_to_client(text, col, encoding)
    return f'{{"line":{line},"character":{character}}}'


def _plain_ints(*values: object) -> bool:
    return all(type(v) is int for v in values)  # not a bool (JSON true), not a float


def findings_frame(uri: str, findings: Sequence[Finding], lines: Sequence[str], encoding: str,
                   uri_of: UriOf) -> bytes:  # fmt: skip
    """`diagnostics_frame(uri, diagnostics_json(findings, ...))`, byte for byte, written as text: a cold
    start frames every file with findings, and the dicts and their encoding were a tenth of its check.
    A finding with related information goes the way of the dicts."""
    parts = []
    for f in findings:
        span = f.span
        if f.related or not _plain_ints(span.line, span.col, span.end_line, span.end_col):
            return diagnostics_frame(uri, diagnostics_json(findings, lines, encoding, uri_of))
        start = _position_text(lines, span.line, span.col, encoding)
        end = _position_text(lines, span.end_line, span.end_col, encoding)
        parts.append(
            f'{{"range":{{"start":{start},"end":{end}}},"message":{_json_string(f.message)},'
            f'"severity":{SEVERITY_NUMBER[f.severity]},"code":{_json_string(f.code)},"source":"{SOURCE}"}}'
        )
    body = (_PUBLISH_HEAD + _json_string(uri) + ',"diagnostics":[' + ",".join(parts) + "]}}").encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def diagnostics_frame(uri: str, diagnostics: list[dict], version: int | None = None) -> bytes:
    params: dict = {"uri": uri, "diagnostics": diagnostics}
    if version is not None:
        params["version"] = version
    return frame({"jsonrpc": "2.0", "method": PUBLISH_DIAGNOSTICS, "params": params})
