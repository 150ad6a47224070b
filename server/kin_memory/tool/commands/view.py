"""`view`: a folder's listing, or a file's lines numbered like `cat -n` (optionally a range of them).

A file larger than the body cap (store.memory.BODY_CAP, 64 KB: what recall reads and what KM600 warns
about) is shown up to the cap, cut at the last whole line, with a note naming its size. Chosen over an
error because the model then still sees what recall sees of the file (its frontmatter and the start of
its body) and can fix or split it; an error would hide the whole file. Either way nothing past the cap is
ever kept in memory or sent to the model: a 300 MB sparse file costs a 64 KB read.
"""

from __future__ import annotations

import os

from kin_memory.store.memory import BODY_CAP, MAX_READ_BYTES
from kin_memory.store.reader import CHUNK, describe_size

from .. import audit, messages
from ..guard import Target, open_target
from . import writing
from .base import ToolContext, ToolFailure
from .listing import listing
from .params import ToolInput, guarded, str_param, view_range_param
from .writing import read_failures

MAX_LINES = 999_999
# Past the cap, newlines are still counted (without keeping the bytes) up to this many bytes, so a file
# of a million short lines keeps the reference's "exceeds maximum line limit" answer.
LINE_SCAN_LIMIT = MAX_READ_BYTES


def number_lines(lines: list[str], start: int) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, start))


def _newlines_after(t: Target, seen: int) -> int:
    """Newlines in the file past its first `seen` bytes, counted without keeping the bytes, stopping
    at LINE_SCAN_LIMIT bytes or as soon as the line limit is certainly exceeded."""
    count = 0
    fd = open_target(t)
    try:
        os.lseek(fd, seen, os.SEEK_SET)
        while seen < LINE_SCAN_LIMIT and count < MAX_LINES:
            chunk = os.read(fd, min(CHUNK, LINE_SCAN_LIMIT - seen))
            if not chunk:
                break
            seen += len(chunk)
            count += chunk.count(b"\n")
    finally:
        os.close(fd)
    return count


def _read_head(t: Target, path: str) -> tuple[bytes, int, bool]:
    """(at most BODY_CAP bytes, the file's size, whether it was cut); too_many_lines as the reference."""
    with read_failures(t, missing=messages.not_found(path)):
        data, st = writing.open_for_read(t, limit=BODY_CAP, truncate=True)
        cut = st.st_size > len(data)
        newlines = data.count(b"\n")
        if cut:
            newlines += _newlines_after(t, len(data))
    if newlines + 1 > MAX_LINES:
        raise ToolFailure(messages.too_many_lines(path))
    return data, st.st_size, cut


def _decode_head(data: bytes, path: str) -> str:
    """The cut head as text: up to its last whole line, or (one giant line) without a split character."""
    end = data.rfind(b"\n")
    if end >= 0:
        data = data[:end]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(data) - 3 or exc.reason != "unexpected end of data":
            raise ToolFailure(messages.not_utf8(path)) from None
        return data[: exc.start].decode("utf-8")


def _lines_of(t: Target, path: str) -> tuple[list[str], str | None]:
    """The file's lines, and the note to add when only the head could be shown."""
    data, size, cut = _read_head(t, path)
    if not cut:
        try:
            return data.decode("utf-8").split("\n"), None
        except UnicodeDecodeError:
            raise ToolFailure(messages.not_utf8(path)) from None
    lines = _decode_head(data, path).split("\n")
    return lines, messages.view_capped(path, describe_size(size), describe_size(BODY_CAP), len(lines))


def _view_file(t: Target, path: str, view_range: tuple[int, int] | None) -> str:
    lines, note = _lines_of(t, path)
    start = 1
    if view_range is not None:
        first, last = view_range
        start = max(1, first)
        lines = lines[start - 1 :] if last == -1 else lines[start - 1 : last]
    text = messages.file_header(path) + "\n" + number_lines(lines, start)
    return text if note is None else text + "\n" + note


def view(inp: ToolInput, ctx: ToolContext) -> str:
    path = str_param(inp, "view", "path")
    t = guarded(ctx.root, path)
    real = os.fspath(t.resolved)
    if not os.path.lexists(real):
        if t.is_root:  # a store not created yet lists as empty
            return listing(t, ctx.active) or ""
        raise ToolFailure(messages.not_found(path))
    if os.path.isdir(real):
        text = listing(t, ctx.active)
        if text is None:  # a folder holding only other workspaces' memories: as missing as they are
            raise ToolFailure(messages.not_found(path))
        return text
    if not os.path.isfile(real):
        raise ToolFailure(messages.unsupported(path))
    view_range = view_range_param(inp)
    outcome = "error"
    try:
        text = _view_file(t, path, view_range)
        outcome = "ok"
        return text
    finally:
        # reading a memory's body is audited like a mutation; folder listings are not
        audit.record(t.root_real, "view", [path], outcome, ctx.source)
