"""The characters no sink lets through raw, and their visible escape.

Hostile: C0 and C1 controls and DEL (terminal escape sequences, line breaks, carriage returns), the
Unicode line and paragraph separators, bidirectional overrides and isolates (text that reads differently
than it is), invisible formatting characters and tag characters (text a person cannot see but a model
reads), and lone surrogates (undecodable bytes of a file name, which cannot even be encoded for output).

Each is shown as the escape Python's repr uses (`\\n`, `\\x1b`, `\\u202e`): visible, one line, and the
same in every sink. Ordinary text, including emoji joiners and every script, passes unchanged.
"""

from __future__ import annotations

import re

_RANGES = (
    (0x00, 0x1F),  # C0 controls: ESC, BEL, CR, LF, NUL...
    (0x7F, 0x9F),  # DEL and C1 controls (0x9B is a one-byte CSI)
    (0xAD, 0xAD),  # soft hyphen: invisible
    (0x061C, 0x061C),  # Arabic letter mark (bidi)
    (0x180E, 0x180E),  # Mongolian vowel separator: invisible
    (0x200B, 0x200B),  # zero-width space
    (0x200E, 0x200F),  # left-to-right and right-to-left marks
    (0x2028, 0x202E),  # line and paragraph separators, bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner and invisible operators
    (0x2066, 0x206F),  # bidi isolates and deprecated format characters
    (0xD800, 0xDFFF),  # lone surrogates (undecodable bytes in a file name)
    (0xFEFF, 0xFEFF),  # zero-width no-break space
    (0xFFF9, 0xFFFB),  # interlinear annotations: hide text
    (0xE0000, 0xE007F),  # tag characters: invisible ASCII a model still reads
)


def _class(ranges: tuple[tuple[int, int], ...], allow: str = "") -> re.Pattern[str]:
    parts = []
    for lo, hi in ranges:
        parts.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    pattern = "[" + "".join(parts) + "]"
    if allow:
        pattern = f"(?![{re.escape(allow)}]){pattern}"
    return re.compile(pattern)


HOSTILE = _class(_RANGES)
HOSTILE_IN_BLOCK = _class(_RANGES, allow="\n\t")  # multi-line text keeps its own lines and tabs
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_char(ch: str) -> str:
    """The visible form of one hostile character, as Python's repr writes it."""
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escape_match(m: re.Match[str]) -> str:
    return escape_char(m.group())


def nothing_to_escape(text: str) -> bool:
    """Whether escape_controls leaves the text as it is (a line of several fields asked at once: when it
    holds nothing to escape, neither does any of its fields). Every hostile character is one Python
    does not call printable, so a printable text is answered without the pattern (half the time for a
    line of `check` output; a test holds the claim for every code point)."""
    return text.isprintable() or HOSTILE.search(text) is None


def escape_controls(text: str) -> str:
    """Every hostile character escaped: the result is one line."""
    return HOSTILE.sub(_escape_match, text) if HOSTILE.search(text) else text


def escape_controls_in_block(text: str) -> str:
    """Every hostile character escaped except line feeds and tabs: the text keeps its own lines."""
    return HOSTILE_IN_BLOCK.sub(_escape_match, text) if HOSTILE_IN_BLOCK.search(text) else text


def is_hostile(ch: str) -> bool:
    return HOSTILE.match(ch) is not None
