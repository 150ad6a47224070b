"""Session logs people actually have, one JSON record at a time, as one turn of prompt text.

Three shapes of JSON lines are read:
- plain Anthropic / OpenAI chat messages (`{"role": …, "content": …}`), see transcript_content;
- Claude Code session files (`~/.claude/projects/<folder>/<session>.jsonl`), see transcript_claude;
- Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), current (`{"type", "payload"}`)
  and older (no wrapper) formats, see transcript_codex.

`render_record` gives "label: text" (user, assistant, tool, subagent, command, summary, context, …), or
None when the record is not conversation (the caller counts those, so the summary can say what was
skipped).
"""

from __future__ import annotations

from typing import Any

from .transcript_claude import claude_record
from .transcript_codex import ITEMS as CODEX_ITEMS
from .transcript_codex import codex_item, codex_record
from .transcript_content import Tally, chat_message

CLAUDE_CODE_KINDS = ("user", "assistant", "attachment", "system")


def render_record(obj: dict[str, Any], tally: Tally) -> str | None:  # Any: parsed JSON
    kind = obj.get("type")
    payload = obj.get("payload")
    if isinstance(payload, dict) and isinstance(kind, str):
        return codex_record(kind, payload, tally)
    if kind in CODEX_ITEMS and not isinstance(obj.get("message"), dict):
        return codex_item(obj, tally)  # an older rollout, or an API message object
    if isinstance(obj.get("message"), dict) or kind in CLAUDE_CODE_KINDS:
        return claude_record(obj, tally)
    if "role" in obj:
        return chat_message(obj, tally)
    return None
