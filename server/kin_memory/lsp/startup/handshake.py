"""The one way the server answers `initialize` before the LSP stack is imported: `early_answer`.

The answer (the server's capabilities) depends only on this code and on the client's capabilities. It is
the one pygls gave this client on an earlier start, remembered (caches/handshake.py keeps it), else the
one this code's server gives, worked out without pygls (capabilities.py); None leaves the answer to
pygls, whose answer is then remembered for the next start. A remembered answer is used only when it is
one this server gives some client (capabilities.is_server_answer: a planted file can tell the editor
nothing this server would not) in an encoding this client takes; otherwise the answer is worked out as
on a first start.
"""

from __future__ import annotations

from ...caches import handshake as kept
from ...caches.handshake import FILE_NAME, KEPT, MAX_BYTES, cache_dir
from .capabilities import initialize_answer, is_server_answer, offers

__all__ = ["FILE_NAME", "KEPT", "MAX_BYTES", "cache_dir", "early_answer", "handshake_key", "remember",
           "remembered"]  # fmt: skip


def handshake_key(params: object) -> str | None:
    """The digest of this code and the client's capabilities; None for params that are not an object."""
    if not isinstance(params, dict):
        return None
    return kept.key_for(params.get("capabilities"))


def early_answer(key: str, params: dict) -> dict | None:
    """The `InitializeResult` to send now: remembered for this client, else worked out here; None when
    the client's capabilities are not of a shape judged here (pygls answers)."""
    return remembered(key, params) or initialize_answer(params)


def remembered(key: str, params: object = None) -> dict | None:
    """The answer remembered for this key: an `InitializeResult` this server gives in an encoding the
    client takes (given its params), or None."""
    result = kept.remembered(key, is_server_answer)
    if not isinstance(result, dict):
        return None
    encoding = result["capabilities"]["positionEncoding"]
    return result if params is None or offers(params, encoding) else None


def remember(key: str, result: object) -> None:
    """Keep pygls's answer for this key, when it is one this server gives (failures only cost speed)."""
    kept.remember(key, result, is_server_answer)
