"""The workers' frames written as text are byte for byte what the dicts and the encoder make."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kin_memory.findings.model import Finding, Related
from kin_memory.lsp.convert import diagnostics_frame, diagnostics_json, findings_frame
from kin_memory.store.span import Span

LINES = [
    "---",
    "category: épisodique 😀",
    "---",
    "plain ascii line",
    'quotes " and \\ and \t tab',
    "\udcff odd",
]
SEVERITIES = ["error", "warning", "information", "hint"]


def uri_of(vpath: str) -> str:
    return "file:///store" + vpath


def by_dicts(uri: str, findings: list[Finding], lines: list[str], encoding: str) -> bytes:
    return diagnostics_frame(uri, diagnostics_json(findings, lines, encoding, uri_of))


texts = st.text(alphabet=st.sampled_from(list('aZ é😀"\\\n\t\x00\u2028/<>') + ["\udcff"]), max_size=30)
spans = st.builds(
    Span,
    st.integers(-1, len(LINES) + 1),
    st.integers(0, 30),
    st.integers(-1, len(LINES) + 1),
    st.integers(0, 30),
)
findings = st.builds(
    Finding,
    st.sampled_from(["KM100", "KM300", "KM602", 'K"M']),
    spans,
    texts,
    st.just(()),
    st.just(()),
    st.sampled_from(SEVERITIES),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(findings, max_size=4),
    st.sampled_from(["utf-8", "utf-16", "utf-32"]),
    st.sampled_from(["file:///store/a.md", "file:///store/%C3%A9t%C3%A9%20x.md", 'file:///odd/"q".md']),
)
def test_the_text_frame_equals_the_encoded_dicts(found: list[Finding], encoding: str, uri: str) -> None:
    assert findings_frame(uri, found, LINES, encoding, uri_of) == by_dicts(uri, found, LINES, encoding)


def test_related_information_and_odd_values_go_the_way_of_the_dicts() -> None:
    related = Finding(
        "KM500", Span(0, 0, 0, 3), "duplicate", (), (Related("/b.md", Span(1, 0, 1, 2), "the other"),)
    )
    odd = Finding("KM100", Span(True, 0, 1, 2), "a bool where a line belongs")  # type: ignore[arg-type]
    for found in ([related], [Finding("KM100", Span(0, 0, 0, 1), "x"), odd]):
        sent = findings_frame("file:///s/a.md", found, LINES, "utf-16", uri_of)
        assert sent == by_dicts("file:///s/a.md", found, LINES, "utf-16")
    body = json.loads(
        findings_frame("file:///s/a.md", [related], LINES, "utf-16", uri_of).split(b"\r\n\r\n")[1]
    )
    assert (
        body["params"]["diagnostics"][0]["relatedInformation"][0]["location"]["uri"] == "file:///store/b.md"
    )
