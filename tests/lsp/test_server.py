"""End-to-end LSP tests against the real server process, over VS Code and Neovim capability presets."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from support.before_start import store_built_first
from support.lens_refresh import answer_lens_refresh


def write(path: Path, text: str, age_days: float = 0) -> Path:
    """Write only what differs: two servers started on the same store (the utf-8/utf-16 pair) must
    not see it deleted and recreated underneath them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
        path.write_text(text, encoding="utf-8", newline="")
    if age_days and abs(path.stat().st_mtime - (time.time() - age_days * 86400)) > 86400:
        t = time.time() - age_days * 86400
        os.utime(path, (t, t))
    return path


STORE = (
    Path(os.environ.setdefault("KIN_TEST_LSP_STORE", f"/tmp/kin-memory-lsp-test-{os.getpid()}")) / "memory"
)


def build_store(root: Path) -> None:
    import shutil

    wanted = {"facts/typo.md", "facts/old.md", "prefs/emoji.md", "facts/ok.md", "broken.md", "bad-utf8.md"}
    if root.is_dir():  # drop what earlier tests added; keep the rest as it is
        for path in sorted(root.rglob("*"), reverse=True):
            rel = path.relative_to(root).as_posix()
            if rel.startswith("."):  # the server's index folder: a cache it manages itself
                continue
            if path.is_dir() and not path.is_symlink():
                if not any(w.startswith(rel + "/") for w in wanted):
                    shutil.rmtree(path, ignore_errors=True)
            elif rel not in wanted:
                path.unlink()
    write(
        root / "facts" / "typo.md",
        "---\ncategory: projcet-fact\nworkspace: global\n---\n# Cache\n\nThe CDN caches assets.\n",
    )
    write(
        root / "facts" / "old.md",
        "---\ncategory: project-fact\nworkspace: global\n---\n# Old\n\nOld fact.\n",
        age_days=400,
    )
    write(root / "prefs" / "emoji.md", "---\ncategory: 😀prefrence\n---\nLikes emoji.\n")
    write(
        root / "facts" / "ok.md",
        "---\ncategory: project-fact\nworkspace: global\n---\n# Fine\n\nNothing wrong.\n",
    )
    write(root / "broken.md", "---\ncategory: [a\n---\nbody\n")
    bad = b"---\ncategory: episodic\nworkspace: global\n---\nbad \xff byte\n"
    if not (root / "bad-utf8.md").is_file() or (root / "bad-utf8.md").read_bytes() != bad:
        (root / "bad-utf8.md").write_bytes(bad)


def uri(rel: str) -> str:
    return (STORE / rel).as_uri()


def fixture_for(preset: str, encoding: str | None = None):
    @pytest_lsp.fixture(
        config=ClientServerConfig(
            server_command=[sys.executable, "-m", "kin_memory", "serve"],
            server_env={**os.environ, "KIN_MEMORY_DIR": str(STORE), "HOME": str(STORE.parent)},
        )
    )
    async def client(lsp_client: LanguageClient):
        answer_lens_refresh(lsp_client)
        caps = client_capabilities(preset)
        if encoding:
            caps.general = lsp.GeneralClientCapabilities(position_encodings=[encoding])
        lsp_client.set_configuration({"toolMode": "auto"}, section="kinMemory")
        await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps, workspace_folders=[]))
        yield lsp_client
        await lsp_client.shutdown_session()

    return client


vscode = fixture_for("visual-studio-code")
neovim = fixture_for("neovim")
utf8 = fixture_for("neovim", "utf-8")
utf16 = fixture_for("neovim", "utf-16")
store_before_the_server = store_built_first(lambda: build_store(STORE))


async def wait_diag(client: LanguageClient, u: str, pred, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        diags = client.diagnostics.get(u)
        if diags is not None and pred(diags):
            return diags
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for diagnostics of {u}: {client.diagnostics.get(u)}")


def codes(diags) -> set[str]:
    return {d.code for d in diags}


@pytest.fixture(params=["vscode", "neovim"])
def client(request):
    return request.getfixturevalue(request.param)


async def test_startup_publishes_closed_files(client):
    diags = await wait_diag(client, uri("facts/typo.md"), lambda d: "KM201" in codes(d))
    d = next(d for d in diags if d.code == "KM201")
    assert d.source == "kin-memory"
    assert d.severity == lsp.DiagnosticSeverity.Warning
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (1, 10, 22)
    await wait_diag(client, uri("facts/old.md"), lambda d: "KM400" in codes(d))
    await wait_diag(client, uri("broken.md"), lambda d: "KM102" in codes(d))
    await wait_diag(client, uri("bad-utf8.md"), lambda d: "KM603" in codes(d))
    assert not client.diagnostics.get(uri("facts/ok.md"))


async def test_edit_then_quick_fix(client):
    u = uri("facts/typo.md")
    text = (STORE / "facts/typo.md").read_text()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=u, language_id="markdown", version=1, text=text)
        )
    )
    diags = await wait_diag(client, u, lambda d: "KM201" in codes(d))
    km201 = next(d for d in diags if d.code == "KM201")
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=u),
            range=km201.range,
            context=lsp.CodeActionContext(diagnostics=[km201]),
        )
    )
    preferred = [a for a in actions if a.is_preferred]
    assert preferred and preferred[0].title == "Replace with `project-fact`"
    edit = preferred[0].edit.document_changes[0].edits[0]
    lines = text.split("\n")
    line = lines[edit.range.start.line]
    lines[edit.range.start.line] = (
        line[: edit.range.start.character] + edit.new_text + line[edit.range.end.character :]
    )
    fixed = "\n".join(lines)
    assert fixed.startswith("---\ncategory: project-fact\n")
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=u, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    await wait_diag(client, u, lambda d: "KM201" not in codes(d))


async def test_hover_completion_lens(client):
    u = uri("facts/old.md")
    text = (STORE / "facts/old.md").read_text()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=u, language_id="markdown", version=1, text=text)
        )
    )
    await wait_diag(client, u, lambda d: "KM400" in codes(d))
    hover = await client.text_document_hover_async(
        lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=u), position=lsp.Position(line=1, character=2)
        )
    )
    assert "project-fact" in hover.contents.value and "stale since" in hover.contents.value
    comp = await client.text_document_completion_async(
        lsp.CompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=u), position=lsp.Position(line=1, character=10)
        )
    )
    assert {i.label for i in comp.items} == {"project-fact", "preference", "episodic", "session"}
    lenses = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=u))
    )
    assert lenses[0].command.title.startswith("project-fact · global · stale since")
    assert any(lens.command.command == "kin.memory.markReviewed" for lens in lenses)


async def test_external_write_picked_up(client):
    await wait_diag(client, uri("facts/ok.md"), lambda d: True, timeout=0.1) if client.diagnostics.get(
        uri("facts/ok.md")
    ) else None
    await asyncio.sleep(0.3)  # let the watcher start
    write(STORE / "facts" / "new.md", "---\ncategory: nope\n---\nnew\n")
    await wait_diag(client, uri("facts/new.md"), lambda d: "KM201" in codes(d), timeout=5)


async def test_utf16_vs_utf8_columns(utf16, utf8):
    u = uri("prefs/emoji.md")
    d16 = next(d for d in await wait_diag(utf16, u, lambda d: "KM201" in codes(d)) if d.code == "KM201")
    d8 = next(d for d in await wait_diag(utf8, u, lambda d: "KM201" in codes(d)) if d.code == "KM201")
    # value `😀prefrence` starts at column 10; the emoji is 2 UTF-16 units, 4 UTF-8 bytes
    assert d16.range.start.character == d8.range.start.character == 10
    assert d16.range.end.character == 10 + 2 + 9
    assert d8.range.end.character == 10 + 4 + 9


async def test_tool_and_list_commands(client):
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(
            command="kin.memory.tool",
            arguments=[{"command": "create", "path": "/memories/new/fact.md", "file_text": "Hello\n"}],
        )
    )
    assert result == {
        "content": "File created successfully at: /memories/new/fact.md. The store added 3 lines of frontmatter "
        "(`category: episodic`) above your text, so your first line is now line 4.",
        "isError": False,
    }
    text = (STORE / "new" / "fact.md").read_text()
    assert text.startswith("---\ncategory: episodic\n") and text.endswith("Hello\n")
    bad = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(
            command="kin.memory.tool", arguments=[{"command": "view", "path": "/memories/../etc/passwd"}]
        )
    )
    assert bad["isError"] is True and "would escape /memories" in bad["content"]
    listing = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="kin.memory.list", arguments=[{}])
    )
    by_path = {m["path"]: m for m in listing["memories"]}
    assert by_path["/memories/facts/old.md"]["status"] == "stale"
    assert by_path["/memories/new/fact.md"]["category"] == "episodic"
