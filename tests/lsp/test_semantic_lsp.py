"""Semantic recall over LSP against the real server and the real model: the layer fills in the background
(with `$/progress`), then `kin.memory.search`, workspace symbols and hover find a memory asked for in
other words; with `recall.semantic: off` they do not, and the model is never loaded."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from support import paraphrase as P

STORE = Path(f"/tmp/kin-memory-semantic-test-{os.getpid()}") / "memory"


def fresh_store() -> None:
    shutil.rmtree(STORE.parent, ignore_errors=True)
    P.build(STORE)


def server(semantic: str):
    @pytest_lsp.fixture(
        config=ClientServerConfig(
            server_command=[sys.executable, "-m", "kin_memory", "serve"],
            server_env={**os.environ, "KIN_MEMORY_DIR": str(STORE), "HOME": str(STORE.parent)},
        )
    )
    async def client(lsp_client: LanguageClient):
        fresh_store()
        lsp_client.set_configuration(
            {"workspace": P.WS, "recall": {"semantic": semantic}}, section="kinMemory"
        )
        await lsp_client.initialize_session(
            lsp.InitializeParams(capabilities=client_capabilities("visual-studio-code"), workspace_folders=[])
        )
        await wait_log(lsp_client, "semantic layer filled" if semantic == "on" else "recall index:")
        yield lsp_client
        await lsp_client.shutdown_session()

    return client


on = server("on")
off = server("off")


async def wait_log(client: LanguageClient, text: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in m.message for m in client.log_messages):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never logged {text!r}: {[m.message for m in client.log_messages]}")


async def search(client: LanguageClient) -> dict:
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="kin.memory.search", arguments=[{"query": P.QUERY}])
    )
    return result if isinstance(result, dict) else dict(result.__dict__)


def paths(result) -> list[str]:
    return [r["path"] if isinstance(r, dict) else r.path for r in result["results"]]


async def hover(client: LanguageClient) -> str | None:
    uri = (STORE / P.HOVERED.removeprefix("/memories/")).as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=uri,
                language_id="kin-memory",
                version=1,
                text=Path(uri.removeprefix("file://")).read_text(),
            )
        )
    )
    result = await client.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=P.HOVER_LINE, character=5),
        )
    )
    return None if result is None else result.contents.value


@pytest.mark.asyncio
async def test_search_symbols_and_hover_find_the_paraphrase(on):
    result = await search(on)
    assert P.ANSWER in paths(result) and P.FOREIGN not in paths(result)
    assert result.get("note") is None
    symbols = await on.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=P.QUERY))
    names = [s.container_name for s in symbols]
    assert P.ANSWER in names and P.FOREIGN not in names
    text = await hover(on)
    assert text is not None and "locales.md" in text and "other-locales.md" not in text
    semantic = [
        reports
        for token, reports in on.progress_reports.items()
        if str(token).startswith("kin-memory-semantic-")
    ]
    assert semantic, on.progress_reports.keys()  # the fill showed its progress in the editor
    assert isinstance(semantic[0][0], lsp.WorkDoneProgressBegin) and isinstance(
        semantic[0][-1], lsp.WorkDoneProgressEnd
    )


@pytest.mark.asyncio
async def test_semantic_off_ranks_by_words_only(off):
    result = await search(off)
    assert paths(result) == []
    symbols = await off.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=P.QUERY))
    assert P.ANSWER not in [s.container_name for s in symbols]
    assert await hover(off) is None
    assert not any("semantic layer" in m.message for m in off.log_messages)
