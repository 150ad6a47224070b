"""A frontmatter YAML refuses: what can still be read of it is read (a broken `workspace:` still names its
repository, so the memory is not taken as global), the squiggle covers the whole bad value, the message is
a sentence, and the obvious fix is offered."""

from __future__ import annotations

from pathlib import Path

from kin_memory.findings.edits import apply_edits
from kin_memory.findings.frontmatter import check
from kin_memory.store.memory import from_text
from kin_memory.store.workspace import visibility
from kin_memory.tool.visibility import stamp_in

BROKEN = "---\ncategory: project-fact\nworkspace: [/home/me/src/webapp\n---\n# Caching\n"


def memory(text: str):
    return from_text(Path("/s/facts/caching.md"), "/memories/facts/caching.md", text, 0.0, len(text))


def test_a_broken_stamp_is_read_as_far_as_it_can_be_by_every_door() -> None:
    m = memory(BROKEN)
    assert m.frontmatter.status == "yaml_error"
    assert (m.category, m.stamp) == ("project-fact", "/home/me/src/webapp")
    assert stamp_in(BROKEN) == "/home/me/src/webapp"  # the tool's reading is the store's
    assert visibility(m.stamp, ("/home/me/src/payments",)).scope == "other workspace"


def test_the_finding_is_a_sentence_over_the_whole_value_with_the_obvious_fix() -> None:
    m = memory(BROKEN)
    [finding] = check(m, None)  # type: ignore[arg-type]
    assert finding.code == "KM102"
    assert "did not find" not in finding.message
    assert "the `[` that opens the value of `workspace` is never closed" in finding.message
    span = finding.span
    assert (span.line, span.col, span.end_line, span.end_col) == (2, 11, 2, 31)
    stray, close = finding.fixes
    assert stray.preferred and not close.preferred
    assert apply_edits(BROKEN, stray.edits) == BROKEN.replace("[/home", "/home")
    assert apply_edits(BROKEN, close.edits) == BROKEN.replace("webapp\n", "webapp]\n")


def test_an_unclosed_quote_is_closed() -> None:
    text = BROKEN.replace("[/home/me/src/webapp", '"/home/me/src/webapp')
    [finding] = check(memory(text), None)  # type: ignore[arg-type]
    [fix] = finding.fixes
    assert fix.title == "Close the quote" and apply_edits(text, fix.edits) == text.replace(
        "webapp\n", 'webapp"\n'
    )
    assert memory(apply_edits(text, fix.edits)).frontmatter.status == "ok"


def test_other_problems_read_as_sentences_without_yaml_words() -> None:
    text = "---\ncategory: project-fact\ntitle: a: b\n---\n"
    [finding] = check(memory(text), None)  # type: ignore[arg-type]
    assert "put the value in quotes" in finding.message and "mapping values" not in finding.message


def test_a_moved_repository_is_not_re_stamped_to_this_workspace_by_default(tmp_path: Path) -> None:
    """KM301 on another repository's memory (payments, seen from webapp): no fix that could be wrong is
    the preferred one; re-stamping here is offered, explicitly."""
    from kin_memory.findings import workspace as ws_findings
    from kin_memory.store.context import Context

    webapp = tmp_path / "webapp"
    webapp.mkdir()
    text = f"---\ncategory: project-fact\nworkspace: {tmp_path / 'payments'}\n---\n# Payments\n"
    ctx = Context(root=tmp_path / "store", active=(str(webapp),))
    [finding] = [f for f in ws_findings.check(memory(text), ctx) if f.code == "KM301"]
    assert not any(fix.preferred for fix in finding.fixes)
    assert any("if this memory is about it" in fix.title for fix in finding.fixes)
