"""Recall results as hover markdown. Memory text is untrusted: every piece of it goes through the
markdown sink, so a memory cannot inject links, `command:` URIs, images or raw HTML into the editor.
Titles and snippets arrive with secrets already masked (recall/service.py)."""

from __future__ import annotations

from collections.abc import Callable

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


def related_markdown(
    related: list[Related], now: float, uri_of: Callable[[str], str] | None = None, note: str | None = None
) -> str:
    """`uri_of`: a memory's file URI, to make its path a link that opens it (the editor's own URI for a
    path of the store, so the link can be nothing else). `note`: why the list was related by words only
    (the semantic layer still filling), shown under it."""
    lines = ["**Related memories**", ""]
    for n, r in enumerate(related, 1):
        h = r.hit
        dup = f" · **likely duplicate ({r.similarity:.0%} shared wording)**" if r.likely_duplicate else ""
        title = markdown.inline(h.title, MAX_TITLE)
        shown = markdown.inline(h.vpath)
        uri = uri_of(h.vpath) if uri_of is not None else ""
        if uri.startswith("file:") and not any(c in uri for c in "()<> \n"):
            shown = f"[{shown}]({uri})"
        lines.append(f"{n}. {shown} — {title}  ")
        lines.append(f"   {markdown.inline(h.category)} · {age(h.mtime, now)}{dup}  ")
        if r.snippet:
            lines.append(f"   {markdown.inline(r.snippet)}")
        lines.append("")
    if note:
        lines.append(f"_{markdown.inline(note[:1].upper() + note[1:])}._")
    return "\n".join(lines).rstrip() + "\n"
