"""The spawn floor: a pygls 2 language server with one hover feature and nothing else.

The bench starts it with the interpreter that runs ``kin-memory serve`` and times spawn → ``initialize``
answer: what any pygls server pays before it can answer, so the floor of cold start, warm restart and the
first correct search.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("bench-floor", "1")


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
    return None


if __name__ == "__main__":
    server.start_io()
