"""The one diagnostics publisher, keyed by (source, document).

Each source publishes its own diagnostics for a document — "file" (the memory's own findings), "store"
(findings about the store: settings files, MEMORY.md's budget), "recall" (KM601 from the index), "sync" (KM800: a conflict a sync left) — and
the client receives their merge. A source replacing its list never drops another source's.

Closed documents with nothing to report stay silent (100k empty publishes at startup would flood the
client); a document that had diagnostics gets an empty publish when the last source clears. At startup,
whole batches arrive pre-framed from the workers: those are recorded as "bulk" entries and recomputed
(through `resolve`) only if another source later needs to merge with them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .convert import diagnostics_frame

SOURCES = ("file", "store", "recall", "sync")
Diagnostics = list[dict]


class _Bulk:
    """Published in a pre-framed batch: the list itself was not kept."""


BULK = _Bulk()
# What most documents hold after startup: the file source's batch entry, nothing else. One shared,
# never-mutated mapping for all of them (at 100k memories a dict each costs tens of MB); a document
# gets its own mapping when anything else is recorded for it.
_FILE_BULK: dict[str, Diagnostics | _Bulk] = {"file": BULK}


class DiagnosticsPublisher:
    def __init__(self, send: Callable[[bytes], None], resolve: Callable[[str, str], Diagnostics]) -> None:
        self._send = send
        self._resolve = resolve  # (source, uri) → that source's diagnostics now, for bulk entries
        self._by_uri: dict[str, dict[str, Diagnostics | _Bulk]] = {}

    def publish(self, source: str, uri: str, diagnostics: Diagnostics, version: int | None = None) -> None:
        """Replace one source's diagnostics for a document and send the merge."""
        per = self._own(uri)
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

    def record(self, source: str, uri: str, diagnostics: Diagnostics) -> None:
        """One source's diagnostics for a document, already sent by someone else (the start-up front)."""
        if diagnostics:
            self._own(uri)[source] = diagnostics

    def publish_bulk(self, source: str, frames: bytes, uris: Iterable[str]) -> None:
        """Pre-framed diagnostics of one source for documents nothing else has published yet."""
        by_uri = self._by_uri
        for uri in uris:
            if source == "file" and uri not in by_uri:
                by_uri[uri] = _FILE_BULK
            else:
                self._own(uri)[source] = BULK
        if frames:
            self._send(frames)

    def merged(self, uri: str) -> Diagnostics:
        per = self._by_uri.get(uri, {})
        out: Diagnostics = []
        for source in SOURCES:
            entry = per.get(source)
            if isinstance(entry, _Bulk):
                entry = self._own(uri)[source] = self._resolve(source, uri)
            out += entry or []
        return out

    def _own(self, uri: str) -> dict[str, Diagnostics | _Bulk]:
        """The document's own mapping, made on first write (never the shared one)."""
        per = self._by_uri.get(uri)
        if per is None or per is _FILE_BULK:
            per = self._by_uri[uri] = dict(per or {})
        return per

    def uris(self, source: str) -> set[str]:
        """Documents for which the source currently has diagnostics."""
        return {uri for uri, per in self._by_uri.items() if source in per}

    def clear(self, source: str, keep: Iterable[str] = ()) -> None:
        """Drop a source's diagnostics everywhere except `keep`."""
        kept = set(keep)
        for uri in self.uris(source) - kept:
            self.publish(source, uri, [])
