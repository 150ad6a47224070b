"""Recall results as hover markdown. Memory text is untrusted: every piece of it goes through the
markdown sink, so a memory cannot inject links, `command:` URIs, images or raw HTML into the editor.
Titles and snippets arrive with secrets already masked (recall/service.py)."""

from __future__ import annotations

from ..sinks import markdown
from .service import Related

MAX_TITLE = 80


def age(mtime: float, now: float) -> str:
    days = max(0.0, now - mtime) / 86400.0
    if days < 1:
        hours = int(days * 24)
        return "just now" if hours == 0 else f"{hours} h ago"
    if days < 60:
        return f"{int(days)} days ago" if int(days) != 1 else "1 day ago"
    return f"{int(days / 30)} months ago"


def related_markdown(related: list[Related], now: float, note: str | None = None) -> str:
    """note: why the list was related by words only (the semantic layer still filling), shown under it."""
    lines = ["**Related memories**", ""]
    for n, r in enumerate(related, 1):
        h = r.hit
        dup = f" · **likely duplicate ({r.similarity:.0%} shared wording)**" if r.likely_duplicate else ""
        title = markdown.inline(h.title, MAX_TITLE)
        lines.append(f"{n}. {markdown.inline(h.vpath)} — {title}  ")
        lines.append(f"   {markdown.inline(h.category)} · {age(h.mtime, now)}{dup}  ")
        if r.snippet:
            lines.append(f"   {markdown.inline(r.snippet)}")
        lines.append("")
    if note:
        lines.append(f"_{markdown.inline(note[:1].upper() + note[1:])}._")
    return "\n".join(lines).rstrip() + "\n"
