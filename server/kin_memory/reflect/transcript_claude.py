"""Claude Code session files (`~/.claude/projects/<folder named after the cwd>/<session>.jsonl`).

One JSON record a line; `type` says what it is:
- "user" / "assistant": a message under `message` (Anthropic shape). Flags change whose words they are:
  `isMeta` (text the tool injected: skipped), `isSidechain` (a subagent's traffic: labelled "subagent"),
  `isCompactSummary` (the summary that replaced the conversation at a compaction: labelled a summary).
  A user message holding `<command-name>` or `<local-command-stdout>` (or the `!` shell's `<bash-input>`,
  `<bash-stdout>`) is a slash command and its output, not something the user said;
- "attachment": `queued_command` is a prompt the user typed while the agent was working (kept as the
  user's words); other attachments are context the tool added;
- "system" with subtype `local_command`: a command the user ran, in the same tags; other system records,
  "summary" (the session's title), "file-history-snapshot", "queue-operation" (the queue's bookkeeping,
  whose prompts the attachment carries), "progress" and anything newer carry no conversation.
"""

from __future__ import annotations

import re
from typing import Any

from .transcript_content import (
    RESULT_HEAD,
    RESULT_TAIL,
    Tally,
    chat_message,
    content_text,
    head_and_tail,
)

_TAG = re.compile(
    r"<(command-name|command-args|local-command-stdout|local-command-stderr|bash-input|bash-stdout"
    r"|bash-stderr)>(.*?)</\1>",
    re.DOTALL,
)
_COMMAND_TAGS = ("<command-name>", "<local-command-stdout>", "<local-command-stderr>", "<bash-input>",
                 "<bash-stdout>", "<bash-stderr>")  # fmt: skip
_SIDECHAIN = {"user": "subagent prompt", "assistant": "subagent", "tool": "subagent tool"}


def claude_record(obj: dict[str, Any], tally: Tally) -> str | None:  # Any: parsed JSON
    kind = obj.get("type")
    if kind == "attachment":
        attachment = obj.get("attachment")
        return _attachment(attachment, tally) if isinstance(attachment, dict) else None
    if kind == "system":
        text = obj.get("content")
        if obj.get("subtype") == "local_command" and isinstance(text, str):
            return _command(text, tally)
        return None  # compaction boundaries, API errors, timings: not conversation
    message = obj.get("message")
    if obj.get("isMeta") or kind not in (None, "user", "assistant") or not isinstance(message, dict):
        return None
    role, content = message.get("role"), message.get("content")
    if obj.get("isCompactSummary"):
        text = content_text(content, tally).strip()
        return f"summary of the earlier conversation (compaction): {text}" if text else None
    plain = _plain(content)
    if role == "user" and plain is not None and any(tag in plain for tag in _COMMAND_TAGS):
        line = _command(plain, tally)
    else:
        line = chat_message(message, tally)
    if line and obj.get("isSidechain"):
        speaker, _, text = line.partition(": ")
        line = f"{_SIDECHAIN.get(speaker, 'subagent ' + speaker)}: {text}"
    return line


def _plain(content: object) -> str | None:
    """The text of a message made only of text (a string or text blocks), else None."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "\n".join(str(b.get("text", "")) for b in content)
    return None


def _command(text: str, tally: Tally) -> str | None:
    """A slash command or `!` shell command and its output, labelled as such."""
    found = {name: body.strip() for name, body in _TAG.findall(text)}
    lines: list[str] = []
    if "command-name" in found:
        lines.append(f"command: {found['command-name']} {found.get('command-args', '')}".rstrip())
    if "bash-input" in found:
        lines.append(f"command: ! {found['bash-input']}")
    for tag, label in (("local-command-stdout", "command output"), ("bash-stdout", "command output"),
                       ("local-command-stderr", "command error output"),
                       ("bash-stderr", "command error output")):  # fmt: skip
        if found.get(tag):
            body, cut = head_and_tail(found[tag], RESULT_HEAD, RESULT_TAIL)
            tally.results_shortened += cut
            lines.append(f"{label}: {body}")
    return "\n".join(lines) or None


def _attachment(attachment: dict[str, Any], tally: Tally) -> str | None:
    if attachment.get("type") != "queued_command":
        return None  # files, todos, hook output: context the tool added
    text = content_text(attachment.get("prompt"), tally).strip()
    if not text:
        return None
    mode = attachment.get("commandMode")
    origin = attachment.get("origin")
    origin_kind = origin.get("kind") if isinstance(origin, dict) else None
    if mode in (None, "prompt") and origin_kind in (None, "human"):
        return f"user (queued while the agent worked): {text}"
    return f"queued {mode or origin_kind}: {text}"  # a task notification, not the user's words
