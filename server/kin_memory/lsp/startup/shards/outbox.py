"""What a worker has checked and not yet sent (framed diagnostics and records, in chunks), how it renders a file's diagnostics, and its share of the prompt-block listing."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the workers import no more than they need before the fork
    from ....caches.segments import Snapshot
    from ....store.memory import Record


from .records import PickledRecords

log = logging.getLogger("kin_memory.lsp")


CHUNK = 2000  # files per chunk sent to the server


def _renderer(root: Path, encoding: str) -> tuple[Callable[..., bytes], Callable[[str], str]]:
    """(a file's findings as one framed publishDiagnostics (b"" when there are none), a vpath's URI)."""
    from ....store.root import VIRTUAL_ROOT
    from ...convert import findings_frame
    from ...uris import path_to_uri, plain_uri, root_uri

    prefix, base = str(root), root_uri(root)

    def uri_of(vpath: str) -> str:  # the same URIs the server makes (Session.uri_of), no Path per file
        return plain_uri(base, vpath) or path_to_uri(prefix + vpath[len(VIRTUAL_ROOT) :])

    def render(memory, findings) -> bytes:
        if not findings:
            return b""
        return findings_frame(uri_of(memory.vpath), findings, memory.lines, encoding, uri_of)

    return render, uri_of


class _Outbox:
    """What a worker has checked and not yet sent: framed diagnostics (with their files) and records.
    Sent every CHUNK files when `stream` takes it (a worker of a big store then never holds its whole
    shard); otherwise (a speculative check not yet confirmed) kept for `chunks` at the end."""

    def __init__(self, stream: Callable[[tuple[str, object]], bool] | None, variant: str = "") -> None:
        self.stream = stream
        self.variant = variant  # the findings cache's, where the server reads a segment's records
        self.records: list[tuple[str, float, int, int, Record | None]] = []
        self.payloads: list[bytes] = []
        self.with_findings: list[str] = []
        self.segments: list[tuple[str, object]] = []  # snapshots not streamed yet

    def add(
        self, vpath: str, mtime: float, size: int, key: int, payload: bytes, record: Record | None
    ) -> None:
        self.records.append((vpath, mtime, size, key, record))
        if payload:
            self.payloads.append(payload)
            self.with_findings.append(vpath)
        if len(self.records) >= CHUNK:
            self.flush()

    def segment(self, vpaths: list[str], uris: str, frames: bytes, snap: Snapshot, aged: set[str]) -> None:
        """A segment answered by its snapshot, less its `aged` files (checked again on their own); its
        files and its URIs (already so) joined by NUL (see JsonRecords)."""
        key = (self.variant, snap.seg, snap.listing)
        chunk = ("segment", ("\0".join(vpaths), uris, frames, key, sorted(aged)))
        if self.stream is None or not self.stream(chunk):
            self.segments.append(chunk)

    def flush(self) -> None:
        stream = self.stream
        if stream is None or not stream(("frames", (list(self.with_findings), b"".join(self.payloads)))):
            return
        stream(("records", PickledRecords.of(self.records)))
        self.records.clear()
        self.payloads.clear()
        self.with_findings.clear()

    def chunks(self) -> Iterator[tuple[str, object]]:
        """What was kept rather than streamed (a speculative check's finds), and the last chunk."""
        yield from self.segments
        for start in range(0, len(self.payloads), CHUNK):
            part = self.with_findings[start : start + CHUNK]
            yield ("frames", (part, b"".join(self.payloads[start : start + CHUNK])))
        for start in range(0, len(self.records), CHUNK):
            yield ("records", PickledRecords.of(self.records[start : start + CHUNK]))


class _Lister:
    """The prompt block's listing lines of the files checked: visible ones listed, others counted."""

    def __init__(self, active) -> None:
        from ....store.prompt_block import line_of
        from ....store.workspace import visibility

        self.active = active
        self.line_of, self.visibility = line_of, visibility
        self.visible: dict[tuple, bool] = {}  # (type, stamp) -> visible in this context (few stamps)

    def line(self, vpath: str, category: Any, stamp: object, title: Any) -> str | None:
        """The file's listing line, None when it is not listed (a session memory, another workspace's)
        — see `hidden` for which."""
        if category == "session" or not self.shown(stamp):
            return None
        return self.line_of(vpath, category, title)

    def shown(self, stamp: object) -> bool:
        key = (type(stamp), stamp if isinstance(stamp, (str, int, float, bool, type(None))) else repr(stamp))
        seen = self.visible.get(key)
        if seen is None:
            seen = self.visible[key] = self.visibility(stamp, self.active).visible
        return seen
