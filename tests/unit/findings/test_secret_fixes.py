"""KM602's quick fixes and the "not a secret" mark: "Remove the line" takes exactly the line that holds
the secret (a private key's whole block), "Mark as not a secret" writes a comment above the line, and every
door's secret reading (the diagnostics, `check`, the sync's warning) honours that mark, for that line
only. Every secret here is fabricated (repeated blocks), none is a credential."""

from __future__ import annotations

from pathlib import Path

from kin_memory.findings import content
from kin_memory.findings.edits import apply_edits
from kin_memory.findings.run import check_memory
from kin_memory.gitsync.door import secrets_out
from kin_memory.store.context import Context
from kin_memory.store.memory import from_text

KEY = "sk-ant-api03-" + "Ab1_" * 8
TOKEN = "ghp_" + "Ab12" * 9
HEAD = "---\ncategory: project-fact\nworkspace: global\n---\n"


def memory_of(text: str):
    return from_text(Path("/s/m.md"), "/memories/m.md", text, 0.0, len(text))


def secrets(text: str) -> list[tuple[int, str]]:
    """(line, flagged text) of every KM602 the whole check reports (suppression included)."""
    memory = memory_of(text)
    found = [f for f in check_memory(memory, Context(root=Path("/s"))) if f.code == "KM602"]
    return [(f.span.line, memory.lines[f.span.line][f.span.col : f.span.end_col]) for f in found]


def fix(text: str, title_start: str, line: int | None = None) -> str:
    """The text after the KM602 quick fix whose title starts so (on `line`, or the first finding)."""
    memory = memory_of(text)
    found = [f for f in content.check(memory, Context(root=Path("/s"))) if f.code == "KM602"]
    finding = next(f for f in found if line is None or f.span.line == line)
    [chosen] = [x for x in finding.fixes if x.title.startswith(title_start)]
    return apply_edits(text, chosen.edits)


def test_remove_takes_exactly_the_line_that_holds_the_secret() -> None:
    text = HEAD + "# Access\n\nThe staging key is " + KEY + " for now.\nAsk Ana for the rest.\n"
    assert fix(text, "Remove the line") == HEAD + "# Access\n\nAsk Ana for the rest.\n"
    crlf = text.replace("\n", "\r\n")
    assert fix(crlf, "Remove the line") == (HEAD + "# Access\n\nAsk Ana for the rest.\n").replace(
        "\n", "\r\n"
    )


def test_remove_on_the_last_line_without_a_final_break_takes_the_break_before_it() -> None:
    text = HEAD + "# Access\n\nkey " + KEY
    assert fix(text, "Remove the line") == HEAD + "# Access\n"


def test_remove_takes_a_private_keys_whole_block() -> None:
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
    text = HEAD + "# Deploy\n\n" + block + "\nUsed by the deploy job.\n"
    memory = memory_of(text)
    [finding] = [f for f in content.check(memory, Context(root=Path("/s"))) if f.code == "KM602"]
    assert [x.title for x in finding.fixes][0] == "Remove the private key (lines 7–10)"
    assert fix(text, "Remove the private key") == HEAD + "# Deploy\n\n\nUsed by the deploy job.\n"


def test_marking_one_line_silences_that_line_only() -> None:
    text = HEAD + "# Notes\n\nexample from the docs: " + KEY + "\nthe real one: " + TOKEN + "\n"
    assert [line for line, _ in secrets(text)] == [6, 7]
    marked = fix(text, "Mark as not a secret", line=6)
    assert marked == (HEAD + "# Notes\n\n<!-- kin-memory: disable-next-line KM602 -->\nexample from the docs: "
                      + KEY + "\nthe real one: " + TOKEN + "\n")  # fmt: skip
    assert secrets(marked) == [(8, TOKEN)]  # the other secret is still flagged, on its moved line
    # the mark is for the line below it: moved away from it, the secret is flagged again
    moved = marked.replace(
        "<!-- kin-memory: disable-next-line KM602 -->\n", "<!-- kin-memory: disable-next-line KM602 -->\n\n"
    )
    assert [line for line, _ in secrets(moved)] == [8, 9]


def test_the_mark_keeps_the_lines_indent_and_no_unknown_code_is_reported() -> None:
    text = HEAD + "- deploy:\n  - token = abcdef1234567890abcd\n"
    marked = fix(text, "Mark as not a secret")
    assert (
        "- deploy:\n  <!-- kin-memory: disable-next-line KM602 -->\n  - token = abcdef1234567890abcd\n"
        in marked
    )
    codes = {f.code for f in check_memory(memory_of(marked), Context(root=Path("/s")))}
    assert "KM602" not in codes and "KM901" not in codes


def test_a_secret_in_the_frontmatter_can_be_removed_but_not_marked() -> None:
    text = "---\ncategory: project-fact\ndescription: token = abcdef1234567890abcd\n---\nbody\n"
    memory = memory_of(text)
    [finding] = [f for f in content.check(memory, Context(root=Path("/s"))) if f.code == "KM602"]
    assert [x.title for x in finding.fixes] == ["Remove the line holding the secret"]


def test_a_next_line_directive_naming_an_unknown_code_is_reported() -> None:
    text = HEAD + "<!-- kin-memory: disable-next-line KM999 -->\nplain\n"
    found = check_memory(memory_of(text), Context(root=Path("/s")))
    assert [(f.code, f.span.line) for f in found if f.code.startswith("KM9")] == [("KM901", 4)]


def test_the_sync_warning_honours_the_mark_and_the_files_directive(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "marked.md").write_text(
        HEAD + "<!-- kin-memory: disable-next-line KM602 -->\nexample: " + KEY + "\n"
    )
    (root / "facts" / "silenced.md").write_text(
        HEAD + "<!-- kin-memory: disable KM602 -->\nexample: " + KEY + "\n"
    )
    (root / "facts" / "leak.md").write_text(
        HEAD + "<!-- kin-memory: disable-next-line KM602 -->\nexample: " + KEY + "\nreal: " + TOKEN + "\n"
    )
    vpaths = ["/memories/facts/marked.md", "/memories/facts/silenced.md", "/memories/facts/leak.md"]
    assert secrets_out(root, vpaths) == ["/memories/facts/leak.md"]
