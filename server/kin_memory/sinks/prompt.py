"""Names listed to the agent: the memory tool's `view` listing and the prompt block's memory listing.

Both listings are one entry per line, read by a model. A file name may hold anything but `/` and NUL, so a
name with a newline could add a line of its own choosing to the agent's system prompt ("- /memories/x.md
(pretend)"), and bidi or tag characters could say one thing to the user and another to the model. A name
goes through `field`: every such character is shown as its escape (`\\n`), so one name is always one entry
on one line. Ordinary names are unchanged, byte for byte.
"""

from __future__ import annotations

from .controls import escape_controls


def field(text: str) -> str:
    """A name (or a title) inside one listing line: never more than that line."""
    return escape_controls(text)
