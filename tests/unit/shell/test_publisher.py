"""The diagnostics publisher and its one serializer, without a client."""

from __future__ import annotations

import json

from kin_memory.findings.model import Finding, Related
from kin_memory.lsp.convert import diagnostic_json, diagnostics_frame
from kin_memory.lsp.publisher import DiagnosticsPublisher
from kin_memory.store.frontmatter import Span

OTHER = ("# 😀 heading", "x😀y related text")


def sent_frames():
    frames: list[dict] = []

    def send(data: bytes) -> None:
        body = data.split(b"\r\n\r\n", 1)[1]
        frames.append(json.loads(body)["params"])

    return frames, send


def test_related_ranges_are_in_the_negotiated_encoding():
    finding = Finding(
        "KM601", Span(0, 0, 0, 3), "dup", related=(Related("/memories/b.md", Span(1, 2, 1, 4), "here"),)
    )
    lines_of = {"/memories/b.md": OTHER}.__getitem__
    uri_of = "file:///s{}".format
    by_encoding = {
        enc: diagnostic_json(finding, ("abc",), enc, uri_of, lines_of)["relatedInformation"][0]["location"][
            "range"
        ]
        for enc in ("utf-8", "utf-16", "utf-32")
    }
    # "x😀y…": code points 2..4 are "y" and " "; before them, x (1) + 😀 (4 bytes, 2 units, 1 code point).
    assert by_encoding["utf-8"] == {"start": {"line": 1, "character": 5}, "end": {"line": 1, "character": 7}}
    assert by_encoding["utf-16"] == {"start": {"line": 1, "character": 3}, "end": {"line": 1, "character": 5}}
    assert by_encoding["utf-32"] == {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 4}}


def test_sources_merge_and_clear_independently():
    frames, send = sent_frames()
    publisher = DiagnosticsPublisher(send, resolve=lambda source, uri: [])
    publisher.publish("file", "u", [{"code": "KM201"}])
    publisher.publish("recall", "u", [{"code": "KM601"}])
    assert [d["code"] for d in frames[-1]["diagnostics"]] == ["KM201", "KM601"]
    publisher.publish("file", "u", [])
    assert [d["code"] for d in frames[-1]["diagnostics"]] == ["KM601"]
    publisher.publish("recall", "u", [])
    assert frames[-1]["diagnostics"] == [] and publisher.uris("recall") == set()


def test_closed_documents_with_nothing_stay_silent_but_open_ones_answer():
    frames, send = sent_frames()
    publisher = DiagnosticsPublisher(send, resolve=lambda source, uri: [])
    publisher.publish("file", "closed", [])
    assert frames == []
    publisher.publish("file", "open", [], version=3)
    assert frames == [{"uri": "open", "diagnostics": [], "version": 3}]


def test_bulk_entries_are_resolved_when_another_source_merges():
    frames, send = sent_frames()
    asked: list[tuple[str, str]] = []

    def resolve(source: str, uri: str) -> list[dict]:
        asked.append((source, uri))
        return [{"code": "KM400"}]

    publisher = DiagnosticsPublisher(send, resolve)
    publisher.publish_bulk("file", diagnostics_frame("u", [{"code": "KM400"}]), ["u"])
    assert frames == [{"uri": "u", "diagnostics": [{"code": "KM400"}]}] and asked == []
    publisher.publish("recall", "u", [{"code": "KM601"}])
    assert asked == [("file", "u")]
    assert [d["code"] for d in frames[-1]["diagnostics"]] == ["KM400", "KM601"]
    publisher.clear("file")
    assert [d["code"] for d in frames[-1]["diagnostics"]] == ["KM601"]


def test_startup_batches_share_one_mapping_until_a_document_gets_more():
    """Documents published only in a startup batch share one record (100k small dicts would cost tens of
    MB); another source publishing for one of them, or its batch entry being resolved, gives that
    document its own record and leaves the others as they were."""
    frames, send = sent_frames()
    resolved = []

    def resolve(source: str, uri: str) -> list[dict]:
        resolved.append((source, uri))
        return [{"message": f"file finding of {uri}"}]

    pub = DiagnosticsPublisher(send, resolve)
    uris = [f"file:///s/m{n}.md" for n in range(50)]
    pub.publish_bulk("file", b"", uris)
    assert len({id(pub._by_uri[u]) for u in uris}) == 1
    pub.publish("recall", uris[3], [{"message": "dup"}])
    assert [f["diagnostics"] for f in frames] == [
        [{"message": "file finding of file:///s/m3.md"}, {"message": "dup"}]
    ]
    assert resolved == [("file", uris[3])]
    assert pub.uris("recall") == {uris[3]} and pub.uris("file") == set(uris)
    pub.publish("recall", uris[3], [])
    assert frames[-1]["diagnostics"] == [{"message": "file finding of file:///s/m3.md"}]
    pub.publish("file", uris[4], [])  # the last source of a document clears: an empty publish
    assert frames[-1] == {"uri": uris[4], "diagnostics": []} and uris[4] not in pub._by_uri
    assert pub.merged(uris[5]) == [{"message": "file finding of file:///s/m5.md"}]
    assert len({id(pub._by_uri[u]) for u in uris if u not in (uris[3], uris[4], uris[5])}) == 1
