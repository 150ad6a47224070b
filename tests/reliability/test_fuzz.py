"""Property-based fuzzing of memory files: generated frontmatter, fences, line endings and bodies.

In process: parsing and every finding family never raise, and every range and quick-fix edit stays
inside the document. Across processes: for generated batches, `kin-memory check --format json` and
the server (the same texts opened as editor buffers) finish promptly and agree on every diagnostic.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import COUNTS, RawServer, check_json, write

from kin_memory.findings.run import check_memory
from kin_memory.store.context import Context
from kin_memory.store.memory import decode, from_text

SAFE_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
YAMLISH = st.sampled_from(list(":-[]{}&*!|>'\"#%@`,?\t \\") + ["\ufeff", "\u2028", "é", "😀", "\r"])
KEYS = st.sampled_from(
    ["category", "workspace", "title", "tags", "x", "<<", "? a", "", "Category", "category "]
)
VALUES = st.one_of(
    st.sampled_from(
        [
            "project-fact",
            "preference",
            "episodic",
            "session",
            "prefrence",
            "Episodic",
            "'session'",
            "global",
            "/srv",
            "~/repo",
            "../x",
            "*a",
            "&a x",
            "[a, b]",
            "{a: 1}",
            "!!binary aGk=",
            "|",
            ">-",
            "null",
            "2024-01-01",
            "1e9",
            "yes",
            '"unterminated',
            "- item",
            "",
        ]
    ),
    st.text(st.one_of(SAFE_CHARS, YAMLISH), max_size=40),
)
SEPS = st.sampled_from([": ", ":", ":\t", " : ", ":  ", " "])
NEWLINES = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def memory_texts(draw) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(SAFE_CHARS, max_size=300))
    nl = draw(NEWLINES)
    lines = []
    opening = draw(st.sampled_from(["---", "--- ", "\ufeff---", "", "---x", "category: preference"]))
    if opening:
        lines.append(opening)
    for _ in range(draw(st.integers(0, 6))):
        indent = draw(st.sampled_from(["", "", "", "  ", "\t", "- "]))
        lines.append(indent + draw(KEYS) + draw(SEPS) + draw(VALUES))
    lines.append(draw(st.sampled_from(["---", "...", "", "--- x", "----", "---  "])))
    body = draw(st.lists(st.text(st.one_of(SAFE_CHARS, YAMLISH), max_size=60), max_size=5))
    mixed = draw(st.booleans())
    sep = nl if not mixed else draw(NEWLINES)
    return sep.join(lines + body) + draw(st.sampled_from(["", nl]))


def _assert_in_bounds(span, lines, what) -> None:
    assert 0 <= span.line <= span.end_line < len(lines), (what, span, len(lines))
    assert 0 <= span.col <= len(lines[span.line]), (what, span)
    assert 0 <= span.end_col <= len(lines[span.end_line]) or (span.end_col == 0), (what, span)
    assert (span.line, span.col) <= (span.end_line, span.end_col), (what, span)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=memory_texts(), raw=st.binary(max_size=200), use_raw=st.booleans())
def test_findings_never_raise_and_stay_in_bounds(text: str, raw: bytes, use_raw: bool) -> None:
    COUNTS["inputs tried (fuzzed files, in process)"] += 1
    data = raw if use_raw else text.encode("utf-8")
    decoded, bad, nul = decode(data)
    memory = from_text(
        Path("/store/f.md"),
        "/memories/f.md",
        decoded,
        time.time() - 3600,
        len(data),
        decode_error=bad,
        has_nul=nul,
    )
    findings = check_memory(memory, Context(root=Path("/store"), active=("/repo",)))
    lines = memory.lines
    for f in findings:
        assert f.code.startswith("KM") and f.message
        _assert_in_bounds(f.span, lines, f.code)
        for fix in f.fixes:
            for edit in fix.edits:
                # an edit may insert at the very end (one past the last line), never beyond
                if edit.span.line == len(lines):
                    assert edit.span.col == 0 and edit.span.end_line == len(lines)
                else:
                    _assert_in_bounds(edit.span, lines, f"{f.code} fix")


def _key(d: dict) -> tuple:
    r = d["range"]
    return (d["code"], r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"])


def test_cli_and_server_agree_on_generated_batches(tmp_path: Path, home: Path) -> None:
    server_root = tmp_path / "server-store"
    server_root.mkdir()
    server = RawServer(server_root, home)
    try:
        server.initialize(caps={"general": {"positionEncodings": ["utf-32"]}, "window": {}})
        batch_no = [0]

        @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        @given(texts=st.lists(memory_texts(), min_size=5, max_size=20))
        def batch(texts: list[str]) -> None:
            batch_no[0] += 1
            disk_root = tmp_path / f"batch-{batch_no[0]}"
            rels = [f"d{i % 3}/f{i}.md" for i in range(len(texts))]
            for rel, text in zip(rels, texts, strict=True):
                write(disk_root / rel, text.encode("utf-8"))
            started = time.monotonic()
            rows = check_json(disk_root, home)
            assert time.monotonic() - started < 20
            cli: dict[str, set] = {rel: set() for rel in rels}
            for row in rows:
                rel = str(Path(row["path"]).relative_to(disk_root))
                cli[rel].add(_key(row))
            with server._cond:
                server.diagnostics.clear()
            uris = [server.open(server_root / rel, text) for rel, text in zip(rels, texts, strict=True)]
            assert "result" in server.hover(uris[0], 0, 0, timeout=20)  # a barrier: every didOpen handled
            for rel, uri in zip(rels, uris, strict=True):
                with server._cond:
                    got = {_key(d) for d in server.diagnostics.get(uri, [])}
                assert got == cli[rel], (rel, json.dumps(texts[rels.index(rel)]), got ^ cli[rel])
            for uri in uris:
                server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            assert "result" in server.hover(uris[0], 0, 0)
            COUNTS["inputs tried (fuzzed files, CLI + server)"] += len(texts)

        batch()
        assert server.shutdown() == 0
        server.assert_clean_stderr()
    finally:
        server.kill()
