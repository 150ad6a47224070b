"""LSP text edits applied to a text as an editor applies them, for tests that check what an edit writes."""

from __future__ import annotations


def apply_edits(text: str, edits: list[dict]) -> str:
    """LSP text edits (as JSON) applied to `text` (ASCII text: UTF-16 units are characters); a position
    past the end of a line or of the text stands for the end of the text."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(pos: dict) -> int:
        return (
            min(starts[pos["line"]] + pos["character"], len(text)) if pos["line"] < len(starts) else len(text)
        )

    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[: offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]) :]
    return text
