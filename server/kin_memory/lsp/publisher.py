"""The one diagnostics publisher, keyed by (source, document).

Each source publishes its own diagnostics for a document — "file" (the memory's own findings), "store"
(findings about the store: settings files, MEMORY.md's budget), "recall" (KM601 from the index) — and
the client receives their merge. A source replacing its list never drops another source's.

Closed documents with nothing to report stay silent (100k empty publishes at startup would flood the
client); a document that had diagnostics gets an empty publish when the last source clears. At startup,
whole batches arrive pre-framed from the workers: those are recorded as "bulk" entries and recomputed
(through `resolve`) only if another source later needs to merge with them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .convert import diagnostics_frame

SOURCES = ("file", "store", "recall")
Diagnostics = list[dict]


class _Bulk:
    """Published in a pre-framed batch: the list itself was not kept."""


BULK = _Bulk()


class DiagnosticsPublisher:
    def __init__(self, send: Callable[[bytes], None], resolve: Callable[[str, str], Diagnostics]) -> None:
        self._send = send
        self._resolve = resolve  # (source, uri) → that source's diagnostics now, for bulk entries
        self._by_uri: dict[str, dict[str, Diagnostics | _Bulk]] = {}

    def publish(self, source: str, uri: str, diagnostics: Diagnostics, version: int | None = None) -> None:
        """Replace one source's diagnostics for a document and send the merge."""
        per = self._by_uri.setdefault(uri, {})
        had_any = bool(per)
        if diagnostics:
            per[source] = diagnostics
        else:
            per.pop(source, None)
        if not per:
            del self._by_uri[uri]
            if not had_any and version is None:
                return
        self._send(diagnostics_frame(uri, self.merged(uri), version))

    def publish_bulk(self, source: str, frames: bytes, uris: Iterable[str]) -> None:
        """Pre-framed diagnostics of one source for documents nothing else has published yet."""
        for uri in uris:
            self._by_uri.setdefault(uri, {})[source] = BULK
        if frames:
            self._send(frames)

    def merged(self, uri: str) -> Diagnostics:
        per = self._by_uri.get(uri, {})
        out: Diagnostics = []
        for source in SOURCES:
            entry = per.get(source)
            if isinstance(entry, _Bulk):
                entry = per[source] = self._resolve(source, uri)
            out += entry or []
        return out

    def uris(self, source: str) -> set[str]:
        """Documents for which the source currently has diagnostics."""
        return {uri for uri, per in self._by_uri.items() if source in per}

    def clear(self, source: str, keep: Iterable[str] = ()) -> None:
        """Drop a source's diagnostics everywhere except `keep`."""
        kept = set(keep)
        for uri in self.uris(source) - kept:
            self.publish(source, uri, [])
