"""What `kin-memory check` prints and keeps of a file's findings: its lines of text (or JSON objects),
their counts, and the CLI's form of the findings in the cache (what it prints, nothing more)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import plain_json
from ..sinks import terminal
from ..sinks.controls import nothing_to_escape
from ..wording import counted
from .check_summary import (  # light (no store, no findings): imported per file otherwise
    Segment,
    count_severities,
)

if TYPE_CHECKING:
    from ..findings.model import Finding


@dataclass
class Part:
    """Printed rows of a check, ready to be joined with others: the text as UTF-8 (or the JSON objects),
    the count per severity and how many files were checked."""

    out: Any
    counts: dict[str, int]
    files: int = 0


Ages = dict[str, tuple[float, str, float]]  # vpath -> (valid until, category, mtime)


def segments_of(
    root: Path, results: dict[str, list[Finding]], ages: Ages, only: Path | None, fmt: str
) -> list[Segment]:
    from ..store.root import VIRTUAL_ROOT

    prefix = str(root)  # the store's paths by string: a Path per file costs more than the check itself
    cut = len(VIRTUAL_ROOT)
    here = here_now()
    segments: list[Segment] = []
    for vpath in sorted(results):
        path = prefix + vpath[cut:]
        seg = segment_for(path, here, vpath, results[vpath], ages.get(vpath, NO_AGE), only, fmt)
        if seg is not None:
            segments.append(seg)
    return segments


NO_AGE = (float("inf"), "", 0.0)


def segment_for(
    path: str,
    here: str,
    vpath: str,
    found: list[Finding],
    age: tuple[float, str, float],
    only: Path | None,
    fmt: str,
    rows: bool = True,
) -> Segment | None:
    """One file's segment (`path`: the file's path as a string; `here`: see here_now), None when nothing
    is printed for it and nothing of it can age. `rows` False: its rows are left out (None), for a caller
    that has them as JSON already."""
    fields = segment_fields(path, here, vpath, found, age, only, fmt, rows)
    return None if fields is None else Segment(*fields)


SegmentFields = tuple[str, float, str, list[str], list[list] | None, list | None]


def segment_fields(
    path: str,
    here: str,
    vpath: str,
    found: list[Finding],
    age: tuple[float, str, float],
    only: Path | None,
    fmt: str,
    rows: bool = True,
) -> SegmentFields | None:
    """segment_for's Segment as its fields (vpath, until, piece, severities, rows, life): a shard of a split
    check packs them as they are, a file at a time."""
    until, category, mtime = age
    if found and only is not None and only != Path(path) and only not in Path(path).parents:
        found = []
    if not found and until == float("inf"):
        return None
    agable = until != float("inf")
    return (
        vpath,
        until,
        _piece([(path, f) for f in found], fmt, here),
        [f.severity for f in found],
        [_row(f) for f in found] if agable and rows else None,
        [category, mtime] if agable else None,
    )


def _row(f: Finding) -> list:
    return [f.code, f.severity, f.message, f.span.line, f.span.col, f.span.end_line, f.span.end_col]


def part_of(segments: list[Segment], files: int, fmt: str) -> Part:
    counts: dict[str, int] = {}
    for seg in segments:
        count_severities(counts, seg.severities)
    return output_part(
        "".join(seg.piece for seg in segments).encode("utf-8", "surrogatepass"), counts, files, fmt
    )


def output_part(text: bytes, counts: dict[str, int], files: int, fmt: str) -> Part:
    """A Part from printed pieces joined (UTF-8): lines of text, or JSON objects each followed by a comma."""
    if fmt == "json":
        return Part(json.loads(b"[" + text[:-1] + b"]") if text else [], counts, files)
    return Part(text, counts, files)


def write_text(text: bytes) -> None:
    """The check's text on standard output: as the bytes it is kept in when the output takes UTF-8 (a
    100k store's check prints 20 MB: no decoding and encoding again), else decoded for it."""
    import codecs

    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    try:
        utf8 = codecs.lookup(stream.encoding or "ascii").name == "utf-8"
    except LookupError:
        utf8 = False
    if utf8 and buffer is not None:
        stream.flush()
        buffer.write(text)
        buffer.flush()
    else:
        stream.write(text.decode("utf-8", "surrogatepass"))


def _piece(rows: list[tuple[str, Finding]], fmt: str, here: str) -> str:
    """What is printed for these findings; in JSON, the objects each followed by a comma."""
    if fmt == "json":
        return "".join(plain_json.dumps(_json(path, f)) + "," for path, f in rows)
    return _text(rows, here)


def render_rows(rows: list[tuple[str, Finding]], fmt: str) -> Part:
    counts: dict[str, int] = {}
    count_severities(counts, (f.severity for _, f in rows))
    if fmt == "json":
        return Part([_json(path, f) for path, f in rows], counts)
    return Part(_text(rows, here_now()).encode("utf-8", "surrogatepass"), counts)


def here_now() -> str:
    """The current folder as printed paths are cut by (`here` + the rest prints as the rest)."""
    return os.getcwd().rstrip(os.sep) + os.sep


def _text(rows: list[tuple[str, Finding]], here: str) -> str:
    """The findings as lines `path:line:col: code severity: message`; the path and the message are
    fields (escaped), asked of the whole line at once: nearly every line has nothing to escape."""
    lines = []
    for path, f in rows:
        shown = path[len(here) :] if path.startswith(here) else path
        line = f"{shown}:{f.span.line + 1}:{f.span.col + 1}: {f.code} {f.severity}: {f.message}\n"
        if not nothing_to_escape(line[:-1]):
            line = f"{terminal.field(shown)}:{f.span.line + 1}:{f.span.col + 1}: {f.code} {f.severity}: {terminal.field(f.message)}\n"
        lines.append(line)
    return "".join(lines)


def add_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}}


def print_summary(counts: dict[str, int], files: int) -> None:
    sys.stdout.flush()  # the summary goes to stderr: keep it after the findings when both share a terminal
    summary = (
        ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(counts.items())) or "no problems"
    )
    print(f"{counted(files, 'file')} checked: {summary}", file=sys.stderr)


def cache_payload(memory, findings: list[Finding]) -> bytes:
    """The CLI's form of a file's findings in the cache: what `check` prints, nothing more."""
    if not findings:
        return b""
    rows = [
        [f.code, f.severity, f.message, f.span.line, f.span.col, f.span.end_line, f.span.end_col]
        for f in findings
    ]
    return plain_json.dumps(rows).encode()


class Keeping:
    """The CLI's render (`cache_payload`), keeping each file's findings as its check made them: what this run
    prints is made from them, not from its own payloads decoded again (a finding made twice per row).
    They print as their payload's would: only code, severity, message and range are printed."""

    def __init__(self) -> None:
        self.found: dict[str, list[Finding]] = {}

    def __call__(self, memory, findings: list[Finding]) -> bytes:
        self.found[memory.vpath] = findings
        return cache_payload(memory, findings)


def findings_of(c, found: dict[str, list[Finding]]) -> list[Finding]:
    """A file's findings: as its check in this process made them, else from its cached payload."""
    kept = found.get(c.vpath)
    return kept if kept is not None else decode_findings(c.payload)


def decode_findings(payload: bytes) -> list[Finding]:
    from ..findings.model import Finding
    from ..store.frontmatter import Span

    if not payload:
        return []
    return [
        Finding(code, Span(line, col, end_line, end_col), message, severity=severity)
        for code, severity, message, line, col, end_line, end_col in json.loads(payload)
    ]


def _json(path: str, f: Finding) -> dict:
    return {
        "path": path,
        "range": {
            "start": {"line": f.span.line, "character": f.span.col},
            "end": {"line": f.span.end_line, "character": f.span.end_col},
        },
        "code": f.code,
        "severity": f.severity,
        "message": f.message,
    }
