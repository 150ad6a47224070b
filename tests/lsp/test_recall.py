"""Recall over LSP against the real server: body hover, workspace symbols, search, the prompt-block
preview, reindex with progress, KM601 on an open buffer — over VS Code and Neovim capabilities."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from support.before_start import store_built_first
from support.lens_refresh import answer_lens_refresh
from support.memfiles import memory, write

WS = "/srv/repos/app"
OTHER = "/srv/repos/other"
STORE = (
    Path(os.environ.setdefault("KIN_TEST_RECALL_STORE", f"/tmp/kin-memory-recall-test-{os.getpid()}"))
    / "memory"
)
HOSTILE = (
    "# Trap\n\nGateway notes: click [run](command:workbench.action.terminal.new) or "
    "<img src=x onerror=alert(1)> or [x](javascript:alert(1)) <b>bold</b> ![i](http://evil/x.png)\n"
)


def build(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
    write(
        root,
        "facts/gateway.md",
        memory(
            "project-fact", "# Gateway\n\nThe gateway terminates TLS and routes to three API nodes.\n", WS
        ),
    )
    write(
        root,
        "facts/gateway-copy.md",
        memory(
            "project-fact",
            "# Gateway again\n\nThe gateway terminates TLS and routes to three API nodes.\n",
            WS,
        ),
    )
    write(
        root,
        "facts/foreign.md",
        memory("project-fact", "# Foreign gateway\n\nThe other team's gateway routes to two nodes.\n", OTHER),
    )
    write(root, "notes/trap.md", memory("episodic", HOSTILE, WS))
    write(root, "prefs/tls.md", memory("preference", "# TLS\n\nAlways pin TLS 1.3 on the gateway.\n"))
    write(root, "session/now.md", memory("session", "# Now\n\nThe gateway restart is happening right now.\n"))
    for i in range(210):  # enough listing lines to pass the prompt block's 200-line cap
        write(root, f"bulk/n{i:03}.md", memory("episodic", f"# Note {i}\n\nfiller words {i}\n", WS))


def make(preset: str):
    @pytest_lsp.fixture(
        config=ClientServerConfig(
            server_command=[sys.executable, "-m", "kin_memory", "serve"],
            server_env={**os.environ, "KIN_MEMORY_DIR": str(STORE), "HOME": str(STORE.parent)},
        )
    )
    async def client(lsp_client: LanguageClient):
        answer_lens_refresh(lsp_client)
        lsp_client.set_configuration({"workspace": WS}, section="kinMemory")
        await lsp_client.initialize_session(
            lsp.InitializeParams(capabilities=client_capabilities(preset), workspace_folders=[])
        )
        await wait_synced(lsp_client)
        yield lsp_client
        await lsp_client.shutdown_session()

    return client


vscode = make("visual-studio-code")
neovim = make("neovim")
store_before_the_server = store_built_first(lambda: build(STORE))


@pytest.fixture(params=["vscode", "neovim"])
def client(request):
    return request.getfixturevalue(request.param)


async def wait_synced(client: LanguageClient, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any("recall index:" in m.message for m in client.log_messages):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(
        f"the recall index never reported its sync: {[m.message for m in client.log_messages]}"
    )


async def command(client: LanguageClient, name: str, arg: dict):
    return await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=name, arguments=[arg])
    )


def uri(rel: str) -> str:
    return (STORE / rel).as_uri()


async def open_doc(client: LanguageClient, rel: str) -> str:
    u = uri(rel)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(
                uri=u, language_id="kin-memory", version=1, text=(STORE / rel).read_text()
            )
        )
    )
    return u


async def hover_text(client: LanguageClient, u: str, line: int, character: int) -> str:
    result = await client.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=u),
            position=lsp.Position(line=line, character=character),
        )
    )
    assert result is not None
    return result.contents.value


@pytest.mark.asyncio
async def test_body_hover_lists_related_memories_duplicates_first(client):
    u = await open_doc(client, "facts/gateway.md")
    text = await hover_text(client, u, 6, 10)
    assert "Related memories" in text
    lines = [ln for ln in text.splitlines() if ln[:1].isdigit()]
    assert "gateway-copy.md" in lines[0] and "likely duplicate" in text
    assert "/memories/facts/gateway.md" not in text.replace("\\", "")  # not the file itself
    assert "foreign.md" not in text  # another workspace's memory
    assert "session" not in text
    assert "project-fact" in text and "ago" in text or "just now" in text


@pytest.mark.asyncio
async def test_hover_output_is_inert(client):
    u = await open_doc(client, "facts/gateway.md")
    text = await hover_text(client, u, 6, 4)
    assert "trap.md" in text
    assert "command:" not in text and "javascript:" not in text
    assert "<img" not in text and "<b>" not in text
    # The only links are the hover's own, from a listed memory's path to its file in the store.
    own = re.findall(r"\]\((file:[^)]*)\)", text)
    assert own and all(u.startswith("file://") and "/memory/" in u for u in own), own
    rest = re.sub(r"\]\(file:[^)]*\)", "", text)
    assert "](" not in rest and "![" not in rest.replace("\\!\\[", "")


@pytest.mark.asyncio
async def test_hover_related_off_keeps_frontmatter_hovers(client):
    u = await open_doc(client, "facts/gateway.md")
    assert "Related memories" in await hover_text(client, u, 6, 10)
    client.set_configuration({"workspace": WS, "hover": {"related": "off"}}, section="kinMemory")
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    deadline = time.monotonic() + 5
    body = "Related memories"
    while body is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        result = await client.text_document_hover_async(
            lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=u), position=lsp.Position(line=6, character=10)
            )
        )
        body = None if result is None else result.contents.value
    assert body is None  # body text: nothing at all, not an empty box
    assert "project-fact" in await hover_text(client, u, 1, 12)  # the frontmatter still explains itself


@pytest.mark.asyncio
async def test_lens_names_a_memory_without_stamp_global(client):
    u = await open_doc(client, "prefs/tls.md")
    lenses = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    assert lenses[0].command.title.startswith("preference · global (no stamp) · "), lenses[0].command.title
    assert "legacy" not in lenses[0].command.title


@pytest.mark.asyncio
async def test_workspace_symbols_by_recall(client):
    symbols = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="gatew"))
    names = [s.container_name for s in symbols]
    assert names and "/memories/facts/foreign.md" not in names
    assert {"/memories/facts/gateway.md", "/memories/facts/gateway-copy.md"} <= set(names)
    assert all(s.location.uri.startswith("file://") for s in symbols)


@pytest.mark.asyncio
async def test_search_command(client):
    result = await command(client, "kin.memory.search", {"query": "gateway TLS", "limit": 3, "ignored": 1})
    results = result["results"]
    assert 0 < len(results) <= 3
    assert set(results[0]) == {"path", "uri", "category", "workspace", "title", "snippet", "score"}
    assert all(r["path"] != "/memories/facts/foreign.md" for r in results)
    wide = await command(client, "kin.memory.search", {"query": "other team", "workspace": "none"})
    assert wide["results"][0]["path"] == "/memories/facts/foreign.md"
    for bad in ({}, {"query": 3}, {"query": "x", "limit": 0}):
        with pytest.raises(JsonRpcInvalidParams):
            await command(client, "kin.memory.search", bad)


@pytest.mark.asyncio
async def test_index_preview_says_what_was_cut(client):
    result = await command(client, "kin.memory.indexPreview", {})
    assert result["truncated"] is True and result["lines"] == 200
    assert result["bytes"] == len(result["text"].encode("utf-8"))
    # 210 bulk notes + 5 other visible memories + 1 line summing up the foreign one = 216 listing lines
    assert result["cut"] == 216 - 200 and result["cutReason"] == "lines"
    assert "foreign.md" not in result["text"] and "now.md" not in result["text"]
    operator = await command(client, "kin.memory.indexPreview", {"workspace": "none"})
    assert operator["hidden"] == 0 and result["hidden"] == 1


@pytest.mark.asyncio
async def test_external_write_reaches_search(client):
    write(STORE, "facts/new.md", memory("project-fact", "# Zebra\n\nThe zebra service owns billing.\n", WS))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        hits = (await command(client, "kin.memory.search", {"query": "zebra billing"}))["results"]
        if hits:
            assert hits[0]["path"] == "/memories/facts/new.md"
            return
        await asyncio.sleep(0.1)
    raise AssertionError("an external write never reached the index")


@pytest.mark.asyncio
async def test_near_duplicate_diagnostic_on_open_buffer(client):
    u = await open_doc(client, "facts/gateway-copy.md")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        km601 = [d for d in client.diagnostics.get(u, []) if d.code == "KM601"]
        if km601:
            d = km601[0]
            assert d.severity == lsp.DiagnosticSeverity.Information
            assert "/memories/facts/gateway.md" in d.message
            assert d.related_information and d.related_information[0].location.uri == uri("facts/gateway.md")
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"no KM601: {client.diagnostics.get(u)}")


@pytest.mark.asyncio
async def test_reindex_with_progress(vscode):
    result = await command(vscode, "kin.memory.reindex", {})
    assert result["files"] == 216 and result["cancelled"] is False
    assert any(
        isinstance(r, lsp.WorkDoneProgressEnd)
        for reports in vscode.progress_reports.values()
        for r in reports
    )
    hits = (await command(vscode, "kin.memory.search", {"query": "gateway"}))["results"]
    assert hits


@pytest.mark.asyncio
async def test_info_names_the_store_and_how_it_was_found(client):
    info = await command(client, "kin.memory.info", {})
    assert info["root"] == str(STORE.resolve()) and info["rootSource"] == "KIN_MEMORY_DIR"
    assert info["workspaces"] == [WS] and info["memoryEnabled"] is True
    assert info["indexState"]["state"] == "ready" and info["indexState"]["memories"] >= 214
    scopes = [(f["scope"], f["exists"]) for f in info["settingsFiles"]]
    assert scopes[0] == ("global", False)


@pytest.mark.asyncio
async def test_index_preview_cli_json_equals_the_command(client):
    """One result type for both faces: the CLI's --json is byte-for-byte the command's answer."""
    import json
    import subprocess

    for workspace in (WS, "none"):
        answer = await command(client, "kin.memory.indexPreview", {"workspace": workspace})
        printed = subprocess.run(
            [
                sys.executable,
                "-m",
                "kin_memory",
                "index-preview",
                "--json",
                "--root",
                str(STORE),
                "--workspace",
                workspace,
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "HOME": str(STORE.parent)},
        ).stdout
        assert json.loads(printed) == answer
        assert set(answer) == {"text", "lines", "bytes", "truncated", "cut", "cutReason", "hidden"}
