"""Transcripts as data: JSON lines (chat messages, Claude Code or Codex CLI session logs), or plain text.

Either way the result is plain text for the prompt ("user: ...", "assistant: ..."); tool traffic is kept
in short form because outcomes often live there. A long transcript keeps its end (the latest turns).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..store.reader import Refused, read_file
from .transcript_formats import normalize

MAX_READ = 8 * 1024 * 1024  # bytes read from the file at most
MAX_CHARS = 120_000  # characters handed to the model
TOOL_SNIPPET = 400


class TranscriptError(Exception):
    """The transcript cannot be read (the message names the file as the user gave it)."""


@dataclass(frozen=True)
class Transcript:
    text: str
    format: str  # "jsonl" or "text"
    messages: int  # messages recognised (0 for plain text)
    truncated: bool
    skipped: int = 0  # JSON records that carry no conversation (session metadata, summaries, …)


def read(path: Path, shown: str | None = None) -> Transcript:
    """Read through the bounded reader: a FIFO, a device or a folder given as the transcript is refused
    at once (a plain read of a FIFO would wait for a writer forever), and at most MAX_READ bytes are read."""
    label = shown or str(path)
    try:
        got = read_file(path, MAX_READ, truncate=True)
    except FileNotFoundError:
        raise TranscriptError(f"transcript not found: {label}") from None
    except Refused as exc:
        if exc.kind == "folder":
            raise TranscriptError(f"transcript is a folder, not a file: {label}") from None
        raise TranscriptError(f"transcript is {exc.reason}, not read: {label}") from None
    except IsADirectoryError:
        raise TranscriptError(f"transcript is a folder, not a file: {label}") from None
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {label}: {exc.strerror or exc}") from None
    return parse(got.data.decode("utf-8", errors="replace"), cut=got.truncated)


def parse(raw: str, *, cut: bool = False) -> Transcript:
    lines = [line for line in raw.splitlines() if line.strip()]
    rendered: list[str] = []
    skipped = 0
    if lines and all(_is_object(line) for line in lines[: min(len(lines), 50)]):
        for line in lines:
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                skipped += 1
                continue
            message = normalize(obj) if isinstance(obj, dict) else None
            text = render_message(message) if message is not None else None
            if text:
                rendered.append(text)
            else:
                skipped += 1
    if rendered:
        return _capped("\n\n".join(rendered), "jsonl", len(rendered), cut, skipped)
    return _capped(raw.replace("\x00", ""), "text", 0, cut)


def _is_object(line: str) -> bool:
    s = line.strip()
    if not s.startswith("{"):
        return False
    try:
        return isinstance(json.loads(s), dict)
    except ValueError:
        return False


def _capped(text: str, fmt: str, count: int, cut: bool, skipped: int = 0) -> Transcript:
    if len(text) > MAX_CHARS:
        text, cut = "[… earlier part of the transcript omitted …]\n" + text[-MAX_CHARS:], True
    return Transcript(text, fmt, count, cut, skipped)


def _short(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= TOOL_SNIPPET else text[:TOOL_SNIPPET] + "…"


def _content_text(content: object) -> str:
    """Anthropic content (str or blocks) or OpenAI content (str or parts) → text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "tool_use":
            parts.append(f"[tool call {block.get('name', '?')}: {_short(block.get('input', {}))}]")
        elif kind == "tool_result":
            parts.append(
                f"[tool result: {_short(_content_text(block.get('content')) or block.get('content', ''))}]"
            )
    return "\n".join(p for p in parts if p)


def render_message(obj: dict[str, Any]) -> str | None:  # Any: parsed JSON
    """One chat-shaped message as "role: text" (see transcript_formats for the session-log shapes)."""
    role = obj.get("role")
    if not isinstance(role, str):
        return None
    text = _content_text(obj.get("content"))
    for call in obj.get("tool_calls") or []:  # OpenAI assistant tool calls
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        if isinstance(fn, dict):
            text += f"\n[tool call {fn.get('name', '?')}: {_short(fn.get('arguments', ''))}]"
    if role == "tool":
        text = f"[tool result: {_short(text)}]"
    text = text.strip()
    return f"{role}: {text}" if text else None
