"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

The current format wraps every record as `{"timestamp", "type", "payload"}`:
- `session_meta` (the session's id and `cwd`), `turn_context` (settings of a turn) and `event_msg` (UI
  events that repeat the messages) carry no conversation;
- `compacted`: the summary that replaced the conversation at a compaction (`payload.message`);
- `response_item`: what the model saw and said. `message` (user, assistant, developer), `reasoning`
  (its `summary` is kept, its encrypted content is not), `function_call` / `custom_tool_call` /
  `local_shell_call` and their outputs, `web_search_call`; newer kinds are skipped.
Older rollouts have no wrapper: a first line with the session's id, `{"record_type": "state"}` lines, and
the response items themselves as records.

Codex prepends instruction blocks to the conversation (`# AGENTS.md instructions for …`,
`<environment_context>`, `<permissions instructions>`): each becomes a one-line label, and a developer
message is only ever a label.
"""

from __future__ import annotations

import json
from typing import Any

from .transcript_content import Tally, as_text, chat_message, instruction_label, tool_call, tool_result

CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
ITEMS = ("message", "reasoning", "web_search_call", *CALLS, *OUTPUTS)


def codex_record(kind: str, payload: dict[str, Any], tally: Tally) -> str | None:  # Any: parsed JSON
    if kind == "response_item":
        return codex_item(payload, tally)
    if kind == "compacted":
        text = payload.get("message")
        if isinstance(text, str) and text.strip():
            return f"summary of the earlier conversation (compaction): {text.strip()}"
    return None  # session_meta, turn_context, event_msg and newer kinds


def codex_item(item: dict[str, Any], tally: Tally) -> str | None:
    kind = item.get("type")
    if kind == "message":
        if item.get("role") in ("developer", "system"):
            return f"context: {_developer_label(item.get('content'))}"
        return chat_message({"role": item.get("role"), "content": item.get("content")}, tally)
    if kind == "reasoning":
        summary = item.get("summary")
        texts = [p.get("text") for p in summary if isinstance(p, dict)] if isinstance(summary, list) else []
        joined = "\n".join(t.strip() for t in texts if isinstance(t, str) and t.strip())
        return f"assistant (reasoning summary): {joined}" if joined else None
    if kind == "web_search_call":
        return f"assistant: [web search: {_search_text(item.get('action'))}]"
    if kind in CALLS:
        arguments = item.get("arguments", item.get("input", item.get("action", "")))
        return f"assistant: {tool_call(item.get('name', 'shell'), arguments, tally)}"
    if kind in OUTPUTS:
        return f"tool: {_output(item.get('output', ''), tally)}"
    return None


def _developer_label(content: object) -> str:
    texts = [content] if isinstance(content, str) else [
        p.get("text") for p in content if isinstance(p, dict)
    ] if isinstance(content, list) else []  # fmt: skip
    labels = [instruction_label(t) for t in texts if isinstance(t, str) and t.strip()]
    return " ".join(label or "[developer instructions]" for label in labels) or "[developer instructions]"


def _search_text(action: object) -> str:
    if not isinstance(action, dict):
        return "(no query recorded)"
    for key in ("query", "url", "pattern"):
        if isinstance(action.get(key), str) and action[key].strip():
            return action[key].strip()
    queries = action.get("queries")
    if isinstance(queries, list) and queries:
        return "; ".join(str(q) for q in queries)
    return as_text(action)


def _output(output: object, tally: Tally) -> str:
    """A call's output: plain text, a JSON string with `output` and `metadata.exit_code` (older shells),
    or an object with `content` and `success`."""
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            decoded = json.loads(output)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict) and "output" in decoded:
            meta = decoded.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            failed = isinstance(code, int) and code != 0
            note = f" (exit code {code})" if failed else ""
            return tool_result(decoded["output"], tally, error=failed, note=note)
    if isinstance(output, dict):
        return tool_result(output.get("content", output), tally, error=output.get("success") is False)
    return tool_result(output, tally)
