"""Strict structuring shared by the command protocol (protocol.py) and the editor settings
(editor_settings.py): cattrs converts "5" to 5 and "false" to True; both must refuse either.

Apart from protocol.py so that reading the settings at start-up does not build every command's classes
(a tenth of a second before the first check could start).
"""

from __future__ import annotations

from typing import Any

import cattrs

KIND_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "a boolean (true or false)"}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _strict(kind: type) -> Any:
    def structure(value: object, _type: object) -> object:
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {KIND_WORDS[kind]}")
        if kind is float and isinstance(value, int):
            return float(value)
        if not isinstance(value, kind):
            raise TypeError(f"expected {KIND_WORDS[kind]}")
        return value

    return structure


def strict_converter() -> cattrs.Converter:
    """A converter that takes each primitive only as itself (an integer for a number, too)."""
    conv = cattrs.Converter(detailed_validation=True, forbid_extra_keys=False)
    for kind in KIND_WORDS:
        conv.register_structure_hook(kind, _strict(kind))
    return conv
