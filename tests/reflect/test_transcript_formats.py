"""Session logs people have, read as they are: Claude Code and Codex CLI records each with the right
speaker (the user's words, the assistant's, a tool's, a subagent's, a command's, a summary's), images as
placeholders, tool results with their end, bookkeeping skipped."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from kin_memory.reflect.transcript import parse, read

FIXTURES = Path(__file__).parent / "fixtures"


def turns(text: str) -> list[str]:
    return text.split("\n\n")


def test_claude_code_session_file() -> None:
    t = read(FIXTURES / "claude-code-session.jsonl")
    assert t.format == "jsonl" and t.messages == 4
    assert t.skipped == 4  # summary, meta caveat, system note, file-history snapshot
    assert "user: The staging database moved: it now listens on port 5433" in t.text
    assert "[tool call Read:" in t.text and "tool: [tool result: db_port = 5433]" in t.text
    assert "assistant: Confirmed: staging Postgres is on 5433." in t.text
    assert "Caveat" not in t.text and "compacted" not in t.text and "Fixing the flaky" not in t.text
    assert t.cuts.sentence() == "" and not t.truncated


def test_claude_code_commands_are_labelled_not_user_words() -> None:
    t = read(FIXTURES / "claude-code-kinds.jsonl")
    said = turns(t.text)
    assert "command: /model opus" in said and "command output: Set model to opus" in said
    assert "command: /mcp" in said  # a system record of subtype local_command
    assert "command: ! git log -1 --oneline" in said and "command output: abc123 point CI at 5433" in said
    assert "<command-name>" not in t.text and "<local-command-stdout>" not in t.text
    users = [s for s in said if s.startswith("user")]
    assert not any("/model" in s or "Set model" in s or "git log" in s for s in users)


def test_claude_code_subagent_traffic_is_labelled() -> None:
    said = turns(read(FIXTURES / "claude-code-kinds.jsonl").text)
    assert "subagent prompt: Look through the CI logs for database errors" in said
    assert "subagent: The CI job connects to port 5432." in said
    assert not any(s.startswith("user: Look through") for s in said)


def test_claude_code_compaction_summary_is_labelled() -> None:
    t = read(FIXTURES / "claude-code-kinds.jsonl")
    summary = [s for s in turns(t.text) if "being continued from a previous conversation" in s]
    assert len(summary) == 1 and summary[0].startswith("summary of the earlier conversation (compaction): ")


def test_claude_code_queued_prompt_is_the_users_words_once() -> None:
    t = read(FIXTURES / "claude-code-kinds.jsonl")
    assert "user (queued while the agent worked): staging uses 5433 by the way" in turns(t.text)
    assert t.text.count("staging uses 5433 by the way") == 1  # the queue-operation echo is bookkeeping
    notice = [s for s in turns(t.text) if "background job done" in s]
    assert len(notice) == 1 and notice[0].startswith("queued task-notification: ")
    assert "edited_text_file" not in t.text and "ci.yml" not in t.text  # other attachments are context


def test_claude_code_tool_error_image_and_thinking() -> None:
    t = read(FIXTURES / "claude-code-kinds.jsonl")
    assert "tool: [tool error: Exit code 1\nFAILED tests/integration/test_db.py::test_connect" in t.text
    assert "tool: [tool result: dashboard captured\n[image: png, 70 bytes]]" in t.text
    assert "iVBORw0KGgo" not in t.text and "private scratchpad" not in t.text
    assert t.cuts.images_replaced == 1
    assert (
        t.cuts.sentence()
        == "The transcript was shortened for the model: 1 image was replaced by a placeholder."
    )
    assert t.messages == 18 and t.skipped == 3  # queue-operation, other attachment, compact boundary


def test_codex_rollout_file() -> None:
    t = read(FIXTURES / "codex-rollout.jsonl")
    assert t.format == "jsonl" and t.messages == 5
    assert t.skipped == 5  # session_meta, 2 event_msg, turn_context, encrypted reasoning
    assert turns(t.text)[0] == "context: [environment context]"
    assert "user: Always squash-merge pull requests in this repo" in t.text
    assert t.text.count("Always squash-merge") == 1  # the event_msg echo is not a second message
    assert "[tool call shell:" in t.text and "pull.rebase" in t.text and "tool: [tool result: true]" in t.text
    assert "assistant: Noted: squash-merge only, linear history." in t.text
    assert "environment_context" not in t.text and "AAAA" not in t.text


def test_codex_instruction_blocks_become_one_line_labels() -> None:
    said = turns(read(FIXTURES / "codex-rollout-kinds.jsonl").text)
    assert said[0] == "context: [permissions instructions]"
    assert said[1] == "context: [AGENTS.md instructions for /srv/repos/shop]\n[environment context]"
    text = "\n".join(said)
    assert "Use pnpm" not in text and "Filesystem sandboxing" not in text and "<shell>" not in text


def test_codex_searches_summaries_and_reasoning_are_kept() -> None:
    t = read(FIXTURES / "codex-rollout-kinds.jsonl")
    said = turns(t.text)
    assert "assistant: [web search: payments sdk changelog EUR refunds]" in said
    assert "assistant (reasoning summary): **Checking the SDK changelog** for EUR refund support" in said
    assert (
        "summary of the earlier conversation (compaction): The user asked which SDK version refunds EUR; "
        "4.2.0 does, tests still fail on currency." in said
    )
    assert "encryptedblob" not in t.text and "ghost" not in t.text


def test_codex_calls_outputs_and_images() -> None:
    t = read(FIXTURES / "codex-rollout-kinds.jsonl")
    said = turns(t.text)
    assert (
        said[2]
        == "user: Which payment provider SDK version supports refunds in EUR?\n[image: jpeg, 90 bytes]"
    )
    assert any(s.startswith("assistant: [tool call apply_patch: *** Begin Patch") for s in said)
    assert "tool: [tool result: Success. Updated the following files:\nM package.json]" in said
    assert "tool: [tool error (exit code 1): FAIL refunds.test.ts: expected currency EUR]" in said
    assert said[-1] == "assistant: Decision: pin payments-sdk 4.2.0, the first version with EUR refunds."
    assert t.messages == 11 and t.skipped == 4  # session_meta, event_msg, turn_context, ghost snapshot


def test_older_codex_rollout_keeps_calls_and_outputs() -> None:
    t = read(FIXTURES / "codex-rollout-legacy.jsonl")
    assert turns(t.text) == [
        "context: [AGENTS.md instructions]",
        "user: Run the Go tests and tell me which package is slow.",
        'assistant: [tool call shell: {"command":["go","test","./..."]}]',
        "tool: [tool result: ok   example.com/api  0.4s\nok   example.com/search  41.9s]",
        "assistant: The search package is slow: 41.9 s of the 42.3 s.",
    ]
    assert t.skipped == 4  # the session line, two state lines, encrypted reasoning


def test_long_tool_result_keeps_its_end_and_counts_the_cut() -> None:
    log = "".join(f"PASSED tests/test_{i}.py::test_ok\n" for i in range(400))
    log += "FAILED tests/test_db.py::test_connect - could not connect to port 5432\n"
    record = {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": log}]},
    }
    t = parse(json.dumps(record))
    assert "FAILED tests/test_db.py::test_connect - could not connect to port 5432" in t.text
    assert "PASSED tests/test_0.py::test_ok" in t.text  # the head stays too
    cut = len(log.strip()) - 600 - 1400
    assert f"[… {cut:,} characters cut …]" in t.text and len(t.text) < 2200
    assert t.cuts.results_shortened == 1 and not t.truncated
    assert "1 tool result was shortened to its start and end" in t.cuts.sentence()


def test_large_image_and_document_become_placeholders() -> None:
    image = base64.b64encode(b"\x89PNG" + b"\0" * (412 * 1024)).decode()
    pdf = base64.b64encode(b"%PDF" + b"\0" * (2 * 1024 * 1024)).decode()
    content = [
        {"type": "text", "text": "see the screenshot and the spec"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": pdf}},
    ]
    t = parse(json.dumps({"type": "user", "message": {"role": "user", "content": content}}))
    assert t.text == "user: see the screenshot and the spec\n[image: png, 412 KB]\n[document: pdf, 2 MB]"
    assert (t.cuts.images_replaced, t.cuts.documents_replaced) == (1, 1)
    assert t.cuts.sentence().endswith("1 image and 1 document were replaced by a placeholder.")


def test_plain_chat_lines_still_read_and_nothing_is_skipped() -> None:
    t = parse('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n')
    assert t.messages == 2 and t.skipped == 0 and t.text == "user: hi\n\nassistant: hello"
