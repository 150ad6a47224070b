"""Diagnostics as framed JSON-RPC bytes, without lsprotocol.

Used on the hot bulk paths (the whole-store check at startup, in shard worker processes that never
import the LSP stack): building attrs objects and structuring them through cattrs cost more than the
check itself. The output is exactly what `convert.to_diagnostic` would serialize to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from ..findings.model import Finding

PUBLISH_DIAGNOSTICS = "textDocument/publishDiagnostics"
SEVERITY_NUMBER = {"error": 1, "warning": 2, "information": 3, "hint": 4}


def col_to_client(line: str, col: int, encoding: str) -> int:
    """A code-point column as the client counts it ("utf-8", "utf-16" or "utf-32")."""
    head = line[:col]
    if encoding == "utf-8":
        return len(head.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(head)
    return len(head.encode("utf-16-le", "surrogatepass")) // 2


def _pos(lines: Sequence[str], line: int, col: int, encoding: str) -> dict:
    text = lines[line] if 0 <= line < len(lines) else ""
    return {"line": line, "character": col if text.isascii() else col_to_client(text, col, encoding)}


def diagnostic_json(f: Finding, lines: Sequence[str], encoding: str, uri_of: Callable[[str], str]) -> dict:
    out: dict = {
        "range": {
            "start": _pos(lines, f.span.line, f.span.col, encoding),
            "end": _pos(lines, f.span.end_line, f.span.end_col, encoding),
        },
        "message": f.message,
        "severity": SEVERITY_NUMBER[f.severity],
        "code": f.code,
        "source": "kin-memory",
        "data": {"code": f.code},
    }
    if f.related:
        out["relatedInformation"] = [
            {
                "location": {
                    "uri": uri_of(r.vpath),
                    "range": {
                        "start": {"line": r.span.line, "character": r.span.col},
                        "end": {"line": r.span.end_line, "character": r.span.end_col},
                    },
                },
                "message": r.message,
            }
            for r in f.related
        ]
    return out


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()  # ASCII (ensure_ascii), so len() is the byte count
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def diagnostics_frame(
    uri: str,
    findings: list[Finding],
    lines: Sequence[str],
    encoding: str,
    uri_of: Callable[[str], str],
    version: int | None = None,
) -> bytes:
    params: dict = {
        "uri": uri,
        "diagnostics": [diagnostic_json(f, lines, encoding, uri_of) for f in findings],
    }
    if version is not None:
        params["version"] = version
    return frame({"jsonrpc": "2.0", "method": PUBLISH_DIAGNOSTICS, "params": params})
