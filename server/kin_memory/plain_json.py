"""JSON text of plain values (lists, strings, numbers), made thousands of times by one check: what
`json.dumps(value)` makes, through an encoder made once.

`json.dumps` builds a new C encoder on every call, which costs as much as encoding a small value (a
cache entry's record, a file's findings, a summary's segment). The encoder here is the same one, made
once, and called directly; where that is not possible (a Python without the C accelerator, or one whose
encoder takes other arguments) `json.dumps` itself is used. Either way the text is the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_SAMPLE = ["KM400", "warning", 'caf\u00e9 \ud800 "q" \\ \n', 1, -2.5, 1e300, None, True, [[]], {"k": [0.1]}]


def _refuse(value: object) -> Any:
    raise TypeError("not a plain value")  # what `json.dumps` raises for it (its callers catch it)


def _made_once(allow_nan: bool) -> Callable[[Any], str]:
    """An encoder for plain values, as `json.dumps(value, allow_nan=allow_nan)` encodes them."""
    plain = json.JSONEncoder(allow_nan=allow_nan).encode
    try:
        from json import encoder as json_encoder

        c_make_encoder = getattr(json_encoder, "c_make_encoder", None)  # the C accelerator's
        encode_basestring_ascii = json_encoder.encode_basestring_ascii
        if c_make_encoder is None:
            return plain
        # No markers: the values encoded here are made by this code, never circular.
        encoder = c_make_encoder(
            None, _refuse, encode_basestring_ascii, None, ": ", ", ", False, False, allow_nan
        )

        def encode(value: Any) -> str:
            return "".join(encoder(value, 0))

        if encode(_SAMPLE) != plain(_SAMPLE) or encode("x") != plain("x"):
            return plain
    except Exception:  # noqa: BLE001 - another Python's encoder: the ordinary one does the same job
        return plain
    return encode


dumps: Callable[[Any], str] = _made_once(allow_nan=True)  # json.dumps(value)
dumps_finite: Callable[[Any], str] = _made_once(allow_nan=False)  # json.dumps(value, allow_nan=False)
