"""Untrusted text for a terminal: every CLI text output goes through here.

A terminal executes what it is sent: OSC 52 writes the clipboard, CSI erases lines, a bare carriage return
overwrites what was printed, bidi overrides reorder it, and an embedded newline prints a line that is not
there (in the very list a user confirms before deleting). `field` makes one value safe on one line;
`block` keeps a text's own line feeds and tabs and escapes everything else; `json_text` escapes inside
JSON strings, so `--json` output decodes to the same data and still cannot drive the terminal.
"""

from __future__ import annotations

import os

from .controls import HOSTILE_IN_BLOCK, escape_controls, escape_controls_in_block


def field(value: object) -> str:
    """One value (a path, a title, a message) on exactly one line, with no control character."""
    return escape_controls(os.fspath(value) if isinstance(value, os.PathLike) else str(value))


def block(text: str) -> str:
    """Multi-line text (a snippet of a file, a diff, a prompt block): its lines and tabs stay; nothing
    else that a terminal interprets gets through."""
    return escape_controls_in_block(text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code > 0xFFFF:  # JSON escapes name UTF-16 code units
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(text: str) -> str:
    """JSON produced with ensure_ascii=False: raw hostile characters (C1, bidi, tags, lone surrogates; the
    encoder already escapes C0 inside strings, so a raw line feed or tab is layout) become \\u escapes,
    which every JSON reader decodes to the same value."""
    found = HOSTILE_IN_BLOCK.search(text)
    return HOSTILE_IN_BLOCK.sub(lambda m: _json_escape(m.group()), text) if found else text
