"""Render memory text inert in markdown hovers."""

from __future__ import annotations

_SPECIAL = set("\\`*_[]()<>#!|~{}")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def escape_markdown(text: str) -> str:
    """Escape markdown punctuation and HTML so links, images and raw HTML are plain text."""
    out: list[str] = []
    for ch in text or "":
        if ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif ch in _SPECIAL:
            out.append("\\" + ch)
        elif ch == ":":
            out.append("&#58;")  # breaks autolinks such as javascript: and command:
        else:
            out.append(ch)
    return "".join(out)
