"""A test client that says it can refresh code lenses must answer the server's request to do so, as an
editor does (VS Code re-asks for the lenses; here there is nothing to redraw)."""

from __future__ import annotations

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient


def answer_lens_refresh(client: LanguageClient) -> None:
    @client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def _refresh(_params: None) -> None:
        return None
