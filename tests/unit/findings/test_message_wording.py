"""Messages read as sentences: a session memory is not called "scratch", nothing is "untouched for 0
days", counts take the right noun, a value's type is named in words, and a memory with no stamp is
"global (no stamp)" rather than "legacy"."""

from __future__ import annotations

import os
import time
from pathlib import Path

from kin_memory.findings.run import check_store
from kin_memory.lsp.features.frontmatter_hover import frontmatter_hover
from kin_memory.store.context import Context
from kin_memory.store.settings import load_settings_file
from kin_memory.store.store import load_store
from kin_memory.store.workspace import visibility
from kin_memory.wording import counted, untouched, value_kind

NOW = time.time()


def put(root: Path, rel: str, text: str, age_days: float) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (NOW - age_days * 86400,) * 2)


def messages(root: Path) -> dict[str, list[str]]:
    found = check_store(load_store(root), Context(root=root, now=NOW))
    return {vpath: [f.message for f in fs] for vpath, fs in found.items()}


def test_lifecycle_messages(tmp_path: Path) -> None:
    put(tmp_path, "sessions/todo.md", "---\ncategory: session\n---\n# T\n", 3 / 24)
    put(tmp_path, "sessions/old.md", "---\ncategory: session\n---\n# T\n", 2)
    put(tmp_path, "facts/old.md", "---\ncategory: project-fact\nworkspace: global\n---\n# O\n", 200.5)
    found = messages(tmp_path)
    assert found["/memories/sessions/todo.md"] == [
        next(m for m in found["/memories/sessions/todo.md"] if m.startswith("session memory expires "))
    ]
    assert any(
        m.startswith("session memory expired ") and m.endswith("the next sweep deletes it")
        for m in found["/memories/sessions/old.md"]
    )
    assert (
        "project fact untouched for 200 days (stale after 180 days): review it, then mark it reviewed"
        in found["/memories/facts/old.md"]
    )
    assert not any("scratch" in m for ms in found.values() for m in ms)


def test_hover_says_touched_today_and_not_untouched_for_0_days(tmp_path: Path) -> None:
    put(tmp_path, "facts/new.md", "---\ncategory: project-fact\nworkspace: global\n---\n# N\n", 0.2)
    memory = load_store(tmp_path).get("/memories/facts/new.md")
    assert memory is not None
    text = frontmatter_hover(memory, 1, 2, Context(root=tmp_path, now=NOW)) or ""
    assert "(touched today)." in text and "for 0 days" not in text


def test_words() -> None:
    assert counted(1, "memory", "memories") == "1 memory" and counted(2, "change") == "2 changes"
    assert untouched(0.5) == "touched today" and untouched(1.2) == "untouched for 1 day"
    assert untouched(42.9) == "untouched for 42 days"
    assert [value_kind(v) for v in ("x", 1, True, [], {})] == [
        "a string", "a number", "a boolean", "a list", "a table",
    ]  # fmt: skip


def test_a_settings_value_of_the_wrong_type_is_named_in_words(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text('memory_enabled = "no"\n')
    [problem] = load_settings_file(path, project=False).problems
    assert problem.message == "`memory_enabled` must be a boolean, got a string"


def test_no_stamp_reads_global_no_stamp() -> None:
    assert visibility(None, ("/src/app",)).scope == "global (no stamp)"


def test_a_refusal_reads_as_a_sentence_and_an_unknown_proposal_is_shown_escaped(tmp_path: Path) -> None:
    import pytest

    from kin_memory.proposals import store as proposals
    from kin_memory.wording import sentence

    assert sentence("reflection is not configured: set x") == "Reflection is not configured: set x."
    assert sentence("Done.") == "Done." and sentence("") == ""
    with pytest.raises(proposals.ProposalError) as err:
        proposals.load(tmp_path, "../x\u202e")
    assert str(err.value) == "there is no proposal `../x\\u202e`"
