"""Session logs people actually have, as conversation messages.

Three shapes of JSON lines are read:
- plain Anthropic / OpenAI chat messages (`{"role": …, "content": …}`);
- Claude Code session files (`~/.claude/projects/<project>/<session>.jsonl`): records with a `type`
  ("user", "assistant", "summary", "system", …) and the message nested under `message`; meta records
  (`isMeta`) and bookkeeping records carry no conversation;
- Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`): `{"type": …, "payload": …}` records, where
  `response_item` payloads hold messages, function calls and their outputs, and `session_meta`,
  `turn_context`, `event_msg` (which repeats messages) and reasoning are not conversation.

`normalize` turns one record into a chat-shaped message dict, or None when the record is not
conversation (the caller counts those, so the summary can say what was skipped).
"""

from __future__ import annotations

from typing import Any

# Codex prepends these to the first user message of every session: context, not something the user said.
CODEX_BOILERPLATE = ("<environment_context>", "<user_instructions>", "<permissions instructions>")
CODEX_SKIPPED = ("session_meta", "turn_context", "event_msg", "compacted")


def normalize(obj: dict[str, Any]) -> dict[str, Any] | None:  # Any: parsed JSON
    if "role" in obj:
        return obj
    kind = obj.get("type")
    if isinstance(obj.get("payload"), dict) and isinstance(kind, str):
        return _codex(kind, obj["payload"])
    if isinstance(obj.get("message"), dict):
        return _claude_code(obj)
    return None


def _claude_code(obj: dict[str, Any]) -> dict[str, Any] | None:
    if obj.get("isMeta") or obj.get("type") not in (None, "user", "assistant"):
        return None
    message = obj["message"]
    return message if isinstance(message.get("role"), str) else None


def _codex(kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    if kind in CODEX_SKIPPED or kind != "response_item":
        return None
    item = payload.get("type")
    if item == "message" and isinstance(payload.get("role"), str):
        if payload["role"] not in ("user", "assistant") or _is_boilerplate(payload.get("content")):
            return None
        return {"role": payload["role"], "content": payload.get("content")}
    if item in ("function_call", "custom_tool_call", "local_shell_call"):
        arguments = payload.get("arguments", payload.get("input", payload.get("action", "")))
        name = payload.get("name", "shell")
        return {"role": "assistant", "content": [{"type": "tool_use", "name": name, "input": arguments}]}
    if item in ("function_call_output", "custom_tool_call_output"):
        output = payload.get("output", "")
        if isinstance(output, dict):
            output = output.get("content", output)
        return {"role": "user", "content": [{"type": "tool_result", "content": output}]}
    return None  # reasoning (often encrypted) and anything newer


def _is_boilerplate(content: object) -> bool:
    texts = [content] if isinstance(content, str) else [
        part.get("text", "") for part in content if isinstance(part, dict)
    ] if isinstance(content, list) else []  # fmt: skip
    joined = "".join(t for t in texts if isinstance(t, str)).lstrip()
    return joined.startswith(CODEX_BOILERPLATE)
