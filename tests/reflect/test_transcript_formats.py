"""Session logs people have: Claude Code and Codex CLI files read as conversation, bookkeeping skipped."""

from __future__ import annotations

from pathlib import Path

from kin_memory.reflect.transcript import parse, read

FIXTURES = Path(__file__).parent / "fixtures"


def test_claude_code_session_file() -> None:
    t = read(FIXTURES / "claude-code-session.jsonl")
    assert t.format == "jsonl" and t.messages == 4
    assert t.skipped == 4  # summary, meta caveat, system note, file-history snapshot
    assert "user: The staging database moved: it now listens on port 5433" in t.text
    assert "[tool call Read:" in t.text and "[tool result: db_port = 5433]" in t.text
    assert "assistant: Confirmed: staging Postgres is on 5433." in t.text
    assert "Caveat" not in t.text and "compacted" not in t.text and "Fixing the flaky" not in t.text


def test_codex_rollout_file() -> None:
    t = read(FIXTURES / "codex-rollout.jsonl")
    assert t.format == "jsonl" and t.messages == 4
    assert t.skipped == 6  # session_meta, environment context, 2 event_msg, turn_context, reasoning
    assert "user: Always squash-merge pull requests in this repo" in t.text
    assert t.text.count("Always squash-merge") == 1  # the event_msg echo is not a second message
    assert "[tool call shell:" in t.text and "pull.rebase" in t.text and "[tool result:" in t.text
    assert "assistant: Noted: squash-merge only, linear history." in t.text
    assert "environment_context" not in t.text and "encrypted" not in t.text


def test_plain_chat_lines_still_read_and_nothing_is_skipped() -> None:
    t = parse('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n')
    assert t.messages == 2 and t.skipped == 0 and t.text == "user: hi\n\nassistant: hello"
