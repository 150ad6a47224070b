"""Transcripts as data: JSON lines (chat messages, Claude Code or Codex CLI session logs), or plain text.

Either way the result is plain text for the prompt, one turn per record ("user: …", "assistant: …",
"tool: …"; see transcript_formats for the labels). The newest turns always reach the model: a large
file is read from its end (a session grows at its end), and when the text is over the model's budget
the OLDEST turns are left out. Every cut is counted in `TranscriptCuts`, whose `sentence()` the command
line and the editors show, so nobody believes the model saw what it did not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..store.reader import Refused, describe_size, read_file_tail
from ..wording import counted
from . import subagents
from .transcript_content import Tally
from .transcript_formats import render_record

MAX_READ = 8 * 1024 * 1024  # bytes read from the end of the file at most
MAX_CHARS = 120_000  # characters handed to the model
SNIFF_LINES = 50  # JSON lines are recognised by their first lines


class TranscriptError(Exception):
    """The transcript cannot be read (the message names the file as the user gave it)."""


@dataclass(frozen=True)
class TranscriptCuts:
    """What of the transcript the model does not see whole, counted."""

    file_size: int = 0
    bytes_not_read: int = 0  # the start of a large file (up to its first whole line after the cut)
    turns_dropped: int = 0  # the oldest turns, left out to fit MAX_CHARS
    chars_dropped: int = 0  # the start of plain text (or of one over-long newest turn), same reason
    results_shortened: int = 0  # tool results and command output kept as head and end
    calls_shortened: int = 0  # tool-call inputs kept as head and end
    images_replaced: int = 0
    documents_replaced: int = 0

    @property
    def lost(self) -> bool:
        """Whether whole parts of the transcript are missing (not merely shortened or replaced)."""
        return bool(self.bytes_not_read or self.turns_dropped or self.chars_dropped)

    def sentence(self) -> str:
        """One sentence naming every cut, or "" when the model reads the transcript whole."""
        parts: list[str] = []
        if self.bytes_not_read:
            parts.append(f"the first {describe_size(self.bytes_not_read)} of the "
                         f"{describe_size(self.file_size)} file were not read")  # fmt: skip
        if self.turns_dropped:
            n = self.turns_dropped
            parts.append(f"the {'oldest turn was' if n == 1 else f'{n} oldest turns were'} left out")
        if self.chars_dropped:
            parts.append(f"the first {self.chars_dropped:,} characters were left out")
        for n, one, many in (
            (self.results_shortened, "tool result was", "tool results were"),
            (self.calls_shortened, "tool-call input was", "tool-call inputs were"),
        ):
            if n:
                parts.append(
                    f"{counted(n, one, many)} shortened to {'its' if n == 1 else 'their'} start and end"
                )
        media = [counted(n, noun) for n, noun in ((self.images_replaced, "image"),
                                                   (self.documents_replaced, "document")) if n]  # fmt: skip
        if media:
            plural = self.images_replaced + self.documents_replaced > 1
            parts.append(f"{' and '.join(media)} {'were' if plural else 'was'} replaced by a placeholder")
        if not parts:
            return ""
        return f"The transcript was shortened for the model: {'; '.join(parts)}."


@dataclass(frozen=True)
class Transcript:
    text: str
    format: str  # "jsonl" or "text"
    messages: int  # turns recognised (0 for plain text), before any was left out
    truncated: bool  # whole parts are missing (cuts.lost)
    skipped: int = 0  # JSON records that carry no conversation (session metadata, summaries, …)
    cuts: TranscriptCuts = field(default_factory=TranscriptCuts)


def read(path: Path, shown: str | None = None) -> Transcript:
    """Read the end of the file through the bounded reader: a FIFO, a device or a folder given as the
    transcript is refused at once (a plain read of a FIFO would wait for a writer forever), and at most
    MAX_READ bytes, the LAST ones, are read."""
    label = shown or str(path)
    try:
        got = read_file_tail(path, MAX_READ)
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
    data, not_read = got.data, (got.size - len(got.data) if got.truncated else 0)
    if got.truncated:
        newline = data.find(b"\n")  # the cut fell inside a record: start at the first whole line
        if newline >= 0:
            data, not_read = data[newline + 1 :], not_read + newline + 1
    text, size = data.decode("utf-8", errors="replace"), got.size
    folder = subagents.folder_of(path)
    if folder is not None:  # Claude Code's subagents, read with their session within the same bounds
        records, sub_not_read, sub_size = subagents.read(folder, MAX_READ - len(got.data))
        text = subagents.merged(text, records)
        not_read, size = not_read + sub_not_read, size + sub_size
    return parse(text, bytes_not_read=not_read, file_size=size)


def parse(raw: str, *, bytes_not_read: int = 0, file_size: int = 0) -> Transcript:
    """Text read from a transcript (its end, when `bytes_not_read` of its start were not read)."""
    lines = [line for line in raw.splitlines() if line.strip()]
    turns: list[str] = []
    tally = Tally()
    skipped = 0
    if lines and all(_is_object(line) for line in lines[:SNIFF_LINES]):
        for line in lines:
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                skipped += 1
                continue
            turn = render_record(obj, tally) if isinstance(obj, dict) else None
            if turn:
                turns.append(turn)
            else:
                skipped += 1
    if turns:
        text, dropped, chars = _newest_turns(turns, bytes_not_read > 0)
        fmt = "jsonl"
    else:
        plain = raw.replace("\x00", "")
        text, fmt, dropped, skipped = _text_end(plain, bytes_not_read > 0), "text", 0, 0
        chars = max(0, len(plain) - MAX_CHARS)
    cuts = TranscriptCuts(
        file_size=file_size,
        bytes_not_read=bytes_not_read,
        turns_dropped=dropped,
        chars_dropped=chars,
        results_shortened=tally.results_shortened,
        calls_shortened=tally.calls_shortened,
        images_replaced=tally.images,
        documents_replaced=tally.documents,
    )
    return Transcript(text, fmt, len(turns), cuts.lost, skipped, cuts)


def _is_object(line: str) -> bool:
    s = line.strip()
    if not s.startswith("{"):
        return False
    try:
        return isinstance(json.loads(s), dict)
    except (ValueError, RecursionError):
        return False


def _newest_turns(turns: list[str], head_not_read: bool) -> tuple[str, int, int]:
    """The newest turns that fit MAX_CHARS, oldest first: (text, turns left out, characters left out of
    a newest turn that alone is over the budget)."""
    budget, first = MAX_CHARS, len(turns)
    while first > 0 and len(turns[first - 1]) + 2 <= budget:
        budget -= len(turns[first - 1]) + 2
        first -= 1
    chars = 0
    kept = turns[first:]
    if not kept:  # the newest turn alone is over the budget: its end is what happened last
        first, last = len(turns) - 1, turns[-1]
        chars = len(last) - MAX_CHARS
        kept = [last[-MAX_CHARS:]]
    marker = _marker(first, head_not_read)
    return marker + "\n\n".join(kept), first, chars


def _marker(dropped: int, head_not_read: bool) -> str:
    """The line that tells the model the transcript does not start at the session's start."""
    if dropped:
        return f"[… {counted(dropped, 'earlier turn')} left out; the latest turns follow …]\n\n"
    return "[… the start of the session was not read; its latest part follows …]\n\n" if head_not_read else ""


def _text_end(text: str, head_not_read: bool) -> str:
    if len(text) > MAX_CHARS:
        return "[… earlier part of the transcript omitted …]\n" + text[-MAX_CHARS:]
    return ("[… the start of the transcript was not read …]\n" if head_not_read else "") + text
