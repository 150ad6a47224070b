"""Message content as prompt text, the parts every session format shares.

- Images and documents become a short placeholder ("[image: png, 412 KB]"): base64 is noise to the model
  and a few screenshots would fill its whole input.
- Tool results keep their head and their end (a test log ends with what failed) with the number of
  characters cut in between; a result flagged as an error says so ("[tool error: …]").
- Instruction blocks an agent prepends to a session (AGENTS.md, environment context, permissions) are
  reduced to a one-line label: context, not something the user said.

`Tally` counts what was replaced or shortened, for the read report.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..store.reader import describe_size

RESULT_HEAD = 600  # characters kept from the start of a tool result
RESULT_TAIL = 1400  # … and from its end, where failures are
CALL_HEAD = 400  # tool-call inputs (a whole file being written, say) are kept shorter
CALL_TAIL = 200

_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+)?;base64,", re.ASCII)
_AGENTS_MD = re.compile(r"# AGENTS\.md instructions for ([^\n]*)")

# Blocks an agent prepends to a user (or developer) message, and the label each one becomes.
INSTRUCTION_BLOCKS = (
    ("<environment_context>", "[environment context]"),
    ("<user_instructions>", "[AGENTS.md instructions]"),
    ("<permissions instructions>", "[permissions instructions]"),
    ("<collaboration_mode>", "[collaboration mode instructions]"),
)


@dataclass
class Tally:
    images: int = 0
    documents: int = 0
    results_shortened: int = 0
    calls_shortened: int = 0


def head_and_tail(text: str, head: int, tail: int) -> tuple[str, bool]:
    """The text, or its head and end with the count of characters cut between them."""
    if len(text) <= head + tail + 40:  # cutting a few characters would only add the marker
        return text, False
    cut = len(text) - head - tail
    return f"{text[:head]}\n[… {cut:,} characters cut …]\n{text[-tail:]}", True


def as_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def instruction_label(text: str) -> str | None:
    """The one-line label of an instruction block, or None when the text is not one."""
    s = text.lstrip()
    agents = _AGENTS_MD.match(s)
    if agents:
        return f"[AGENTS.md instructions for {agents.group(1).strip()}]"
    for prefix, label in INSTRUCTION_BLOCKS:
        if s.startswith(prefix):
            return label
    return None


def _base64_size(data: object) -> int | None:
    if not isinstance(data, str):
        return None
    body = data.strip()
    return max(0, len(body) * 3 // 4 - body[-2:].count("="))


def _placeholder(kind: str, media_type: object, size: int | None) -> str:
    fmt = media_type.split("/")[-1] if isinstance(media_type, str) and media_type else "unknown format"
    return f"[{kind}: {fmt}, {describe_size(size)}]" if size is not None else f"[{kind}: {fmt}]"


def _media(block: dict[str, Any], kind: str, tally: Tally) -> str:
    """An Anthropic image or document block (source base64, url, file or text)."""
    if kind == "image":
        tally.images += 1
    else:
        tally.documents += 1
    source = block.get("source")
    source = source if isinstance(source, dict) else {}
    data = source.get("data")
    media_type = source.get("media_type") or ("text/plain" if source.get("type") == "text" else None)
    size = len(data.encode("utf-8")) if source.get("type") == "text" and isinstance(data, str) else None
    return _placeholder(kind, media_type, size if size is not None else _base64_size(data))


def _data_url(url: object, tally: Tally) -> str:
    """An OpenAI/Codex image part: a data: URL holds the image itself, anything else is a link."""
    tally.images += 1
    text = url if isinstance(url, str) else ""
    found = _DATA_URL.match(text)
    if found:
        return _placeholder("image", found.group(1), _base64_size(text[found.end() :]))
    return "[image: linked]"


def tool_call(name: object, arguments: object, tally: Tally) -> str:
    text, cut = head_and_tail(as_text(arguments), CALL_HEAD, CALL_TAIL)
    tally.calls_shortened += cut
    return f"[tool call {name if isinstance(name, str) and name else '?'}: {text}]"


def tool_result(content: object, tally: Tally, *, error: bool = False, note: str = "") -> str:
    """A tool result (text, or blocks holding text and images) as "[tool result: …]", head and end kept."""
    body = content_text(content, tally) if isinstance(content, list) else as_text(content or "")
    text, cut = head_and_tail(body.strip(), RESULT_HEAD, RESULT_TAIL)
    tally.results_shortened += cut
    return f"[tool {'error' if error else 'result'}{note}: {text}]"


def content_text(content: object, tally: Tally, *, instructions: bool = False) -> str:
    """Anthropic content (a string or blocks) or OpenAI/Codex content (a string or parts) as text.
    With `instructions`, instruction blocks (see instruction_label) become their label."""
    if isinstance(content, str):
        return (instruction_label(content) or content) if instructions else content
    if not isinstance(content, list):
        return ""
    parts = [_block_text(block, tally, instructions) for block in content]
    return "\n".join(p for p in parts if p)


def _block_text(block: object, tally: Tally, instructions: bool) -> str:
    if isinstance(block, str):
        return (instruction_label(block) or block) if instructions else block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    text = block.get("text")
    if kind in ("text", "input_text", "output_text") and isinstance(text, str):
        return (instruction_label(text) or text) if instructions else text
    if kind in ("image", "document"):
        return _media(block, kind, tally)
    if kind == "input_image":
        return _data_url(block.get("image_url"), tally)
    if kind == "image_url":
        inner = block.get("image_url")
        return _data_url(inner.get("url") if isinstance(inner, dict) else inner, tally)
    if kind == "tool_use":
        return tool_call(block.get("name"), block.get("input", {}), tally)
    if kind == "tool_result":
        return tool_result(block.get("content"), tally, error=block.get("is_error") is True)
    return ""  # thinking (the model's scratchpad) and block kinds this reader does not know


def is_only_tool_results(content: object) -> bool:
    """A user message that only carries tool results: the tool speaking, not the user."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def only_instructions(content: object) -> bool:
    """Whether every text part of a message is an instruction block (see instruction_label)."""
    parts = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    raw = [p if isinstance(p, str) else p.get("text") for p in parts if isinstance(p, str | dict)]
    texts: list[str] = [t for t in raw if isinstance(t, str) and t.strip()]
    return bool(texts) and all(instruction_label(t) is not None for t in texts)


def chat_message(obj: dict[str, Any], tally: Tally) -> str | None:  # Any: parsed JSON
    """One Anthropic- or OpenAI-shaped message as "role: text"."""
    role = obj.get("role")
    if not isinstance(role, str):
        return None
    content = obj.get("content")
    text = content_text(content, tally, instructions=role in ("user", "developer", "system"))
    for call in obj.get("tool_calls") or []:  # OpenAI assistant tool calls
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        if isinstance(fn, dict):
            text += "\n" + tool_call(fn.get("name"), fn.get("arguments", ""), tally)
    if role == "tool":
        text = tool_result(text, tally)
    elif role == "user" and is_only_tool_results(content):
        role = "tool"
    elif role in ("user", "developer", "system") and only_instructions(content):
        role = "context"  # what the agent prepended: labelled, never the user's words
    text = text.strip()
    return f"{role}: {text}" if text else None
