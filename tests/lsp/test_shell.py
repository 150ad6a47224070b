"""The language-server shell: settings files as diagnostics, typed editor settings, one serializer."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from support.before_start import store_built_first
from support.lens_refresh import answer_lens_refresh

BASE = Path(os.environ.setdefault("KIN_TEST_SHELL_BASE", f"/tmp/kin-memory-shell-test-{os.getpid()}"))
HOME = BASE / "home"
STORE = BASE / "memory"
REPO = BASE / "repo"
GLOBAL_SETTINGS = HOME / ".kin" / "settings.toml"
PROJECT_SETTINGS = REPO / ".kin" / "settings.toml"
EMOJI = "---\ncategory: 😀projcet-fact\n---\nbody\n"


def build() -> None:
    import shutil

    shutil.rmtree(BASE, ignore_errors=True)
    for folder in (HOME / ".kin", STORE / "facts", REPO / ".kin"):
        folder.mkdir(parents=True)
    GLOBAL_SETTINGS.write_text("memory_enabled = tru\n")  # not TOML: KM701
    PROJECT_SETTINGS.write_text('# project\nmemory_dir = "/tmp/elsewhere"\n')  # global-only: KM700
    (STORE / "facts" / "emoji.md").write_text(EMOJI)


def make(preset: str, encoding: str, settings: dict):
    @pytest_lsp.fixture(
        config=ClientServerConfig(
            server_command=[sys.executable, "-m", "kin_memory", "serve"],
            server_env={**os.environ, "KIN_MEMORY_DIR": str(STORE), "HOME": str(HOME)},
        )
    )
    async def client(lsp_client: LanguageClient):
        answer_lens_refresh(lsp_client)
        caps = client_capabilities(preset)
        caps.general = lsp.GeneralClientCapabilities(position_encodings=[encoding])
        lsp_client.set_configuration(settings, section="kinMemory")
        folder = lsp.WorkspaceFolder(uri=REPO.as_uri(), name="repo")
        name = "Neovim" if preset == "neovim" else "Visual Studio Code"
        await lsp_client.initialize_session(
            lsp.InitializeParams(
                capabilities=caps, workspace_folders=[folder], client_info=lsp.ClientInfo(name=name)
            )
        )
        yield lsp_client
        await lsp_client.shutdown_session()

    return client


vscode = make("visual-studio-code", "utf-16", {"staleDays": "soon", "toolMode": "yolo", "sessionHours": 12})
neovim_utf8 = make("neovim", "utf-8", {"reflection": {"maxToolCalls": 0}})
store_before_the_server = store_built_first(build)


async def wait_for(pred, timeout: float = 10.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def codes(client: LanguageClient, path: Path) -> set[str]:
    return {str(d.code) for d in client.diagnostics.get(path.as_uri(), [])}


async def test_settings_files_carry_their_diagnostics(vscode):
    await wait_for(
        lambda: "KM701" in codes(vscode, GLOBAL_SETTINGS), what="KM701 on the global settings file"
    )
    await wait_for(
        lambda: "KM700" in codes(vscode, PROJECT_SETTINGS), what="KM700 on the project settings file"
    )
    km700 = next(d for d in vscode.diagnostics[PROJECT_SETTINGS.as_uri()] if d.code == "KM700")
    assert km700.range.start.line == 1 and km700.severity == lsp.DiagnosticSeverity.Warning
    # Fixed on disk while the server runs: both are republished empty.
    GLOBAL_SETTINGS.write_text("memory_enabled = true\n")
    PROJECT_SETTINGS.write_text("# project\n")
    await wait_for(lambda: not codes(vscode, GLOBAL_SETTINGS), what="the global settings file to clear")
    await wait_for(lambda: not codes(vscode, PROJECT_SETTINGS), what="the project settings file to clear")
    GLOBAL_SETTINGS.write_text("memory_enabled = 3\n")  # wrong type
    await wait_for(lambda: "KM701" in codes(vscode, GLOBAL_SETTINGS), what="KM701 for a wrong type")


async def test_invalid_editor_settings_are_reported_once_and_defaulted(vscode):
    shown = await wait_for(
        lambda: [m.message for m in vscode.messages if m.type == lsp.MessageType.Warning], what="a warning"
    )
    assert any('kinMemory.staleDays has an invalid value "soon"' in m for m in shown), shown
    assert any(
        'kinMemory.toolMode has an invalid value "yolo"' in m and "auto, strict, plan" in m for m in shown
    )
    assert not any("sessionHours" in m for m in shown)  # a valid value is not reported
    # The same settings again: no second report.
    vscode.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await asyncio.sleep(0.5)
    assert len([m for m in vscode.messages if "staleDays" in m.message]) == 1
    # The default stands in for the bad toolMode: "auto" writes without asking.
    created = await vscode.workspace_execute_command_async(
        lsp.ExecuteCommandParams(
            command="kin.memory.tool",
            arguments=[{"command": "create", "path": "/memories/facts/new.md", "file_text": "x\n"}],
        )
    )
    assert created["isError"] is False and created["content"].startswith(
        "File created successfully at: /memories/facts/new.md. The store added 4 lines of frontmatter"
    )


async def test_setting_names_are_the_editors_own(neovim_utf8):
    shown = await wait_for(lambda: [m.message for m in neovim_utf8.messages], what="a message")
    assert any("settings.reflection.maxToolCalls (in require('kin_memory').setup)" in m for m in shown), shown
    assert not any("kinMemory." in m for m in shown)


@pytest.fixture(params=[("vscode", "utf-16"), ("neovim_utf8", "utf-8")], ids=["utf-16", "utf-8"])
def client_and_encoding(request):
    return request.getfixturevalue(request.param[0]), request.param[1]


async def test_code_actions_see_the_published_diagnostic(client_and_encoding):
    client, encoding = client_and_encoding
    target = STORE / "facts" / "emoji.md"
    uri = target.as_uri()
    published = await wait_for(
        lambda: [d for d in client.diagnostics.get(uri, []) if d.code == "KM201"],
        what="KM201 on the emoji file",
    )
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=published[0].range,
            context=lsp.CodeActionContext(diagnostics=published),
        )
    )
    attached = [d for a in actions or [] for d in (a.diagnostics or []) if d.code == "KM201"]
    assert attached, actions
    converter = get_converter()
    for diagnostic in attached:
        assert converter.unstructure(diagnostic) == converter.unstructure(published[0])
    # The emoji is 2 UTF-16 units and 4 UTF-8 bytes: the range is in the negotiated encoding.
    start, end = published[0].range.start.character, published[0].range.end.character
    assert start == len("category: ")
    value = "😀projcet-fact"
    assert end - start == (
        len(value.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(value.encode())
    )
