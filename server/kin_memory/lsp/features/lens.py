"""Code lens on a memory's first line: category · visibility · lifecycle, with mark-reviewed when stale."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from ...store.lifecycle import lifecycle
from ...store.workspace import visibility
from ..handlers import handler
from ..session import Session


class CodeLens:
    def __init__(self, session: Session) -> None:
        self.session = session

    def register(self, server: LanguageServer) -> None:
        server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)(handler(self.lenses))

    def lenses(self, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        uri = params.text_document.uri
        vpath = self.session.vpath_of(uri)
        memory = self.session.store.get(vpath) if vpath else None
        if memory is None or memory.is_index:
            return []
        ctx = self.session.context()
        life = lifecycle(memory.category, memory.mtime, ctx.now, ctx.thresholds)
        vis = visibility(memory.stamp, ctx.active)
        rng = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
        title = f"{memory.category} · {vis.scope} · {life.label}"
        lenses = [lsp.CodeLens(range=rng, command=lsp.Command(title=title, command=""))]
        if life.status == "stale":
            review = lsp.Command(
                title="Mark reviewed", command="kin.memory.markReviewed", arguments=[{"uri": uri}]
            )
            lenses.append(lsp.CodeLens(range=rng, command=review))
        return lenses
