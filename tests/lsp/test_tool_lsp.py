"""The memory tool, sweep and mark-reviewed over LSP, against the real server process.

The test client behaves like an editor: it keeps buffers for the documents it opened, applies
`workspace/applyEdit` to them (then reports the change with didChange), and answers strict-mode
confirmations with whatever the test chose.
"""

from __future__ import annotations

import ast
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from kin_memory.lsp.commands.tool import line_edit, split_lsp_lines
from support.before_start import store_built_first
from support.lens_refresh import answer_lens_refresh

BASE = Path(tempfile.mkdtemp(prefix="kin-memory-tool-lsp-"))
STORE = BASE / "memory"
HOME = BASE / "home"
DAY = 86400


def write(rel: str, text: str, age_days: float = 0) -> Path:
    p = STORE / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8", newline="")
    if age_days:
        t = time.time() - age_days * DAY
        os.utime(p, (t, t))
    return p


def build_store() -> None:
    shutil.rmtree(STORE, ignore_errors=True)
    shutil.rmtree(HOME, ignore_errors=True)
    HOME.mkdir(parents=True)
    write(
        "facts/open.md",
        "---\ncategory: project-fact\nworkspace: global\n---\n# Deploy\n\nWe deploy on Fridays.\nRollback is manual.\n",
    )
    write("facts/stale.md", "---\ncategory: project-fact\nworkspace: global\n---\nOld fact.\n", age_days=400)
    write("prefs/merge.md", "---\ncategory: preference\n---\nSquash merges.\n")


@pytest.fixture(scope="module", autouse=True)
def _cleanup():
    yield
    shutil.rmtree(BASE, ignore_errors=True)


def uri(rel: str) -> str:
    return (STORE / rel).as_uri()


def apply_text_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply LSP edits (ASCII test content: characters are string indices)."""
    lines = split_lsp_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(p: lsp.Position) -> int:
        return starts[p.line] + p.character if p.line < len(lines) else len(text)

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


def fixture_for(preset: str):
    @pytest_lsp.fixture(
        config=ClientServerConfig(
            server_command=[sys.executable, "-m", "kin_memory", "serve"],
            server_env={**os.environ, "KIN_MEMORY_DIR": str(STORE), "HOME": str(HOME)},
        )
    )
    async def client(lsp_client: LanguageClient):
        answer_lens_refresh(lsp_client)
        lsp_client.buffers = {}  # uri -> [text, version]
        lsp_client.edits_seen = []
        lsp_client.apply_ok = True
        lsp_client.answer = "Allow"
        lsp_client.asked = []

        @lsp_client.feature(lsp.WORKSPACE_APPLY_EDIT)
        def apply_edit(
            ls: LanguageClient, params: lsp.ApplyWorkspaceEditParams
        ) -> lsp.ApplyWorkspaceEditResult:
            ls.edits_seen.append(params.edit)
            if not ls.apply_ok:
                return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="refused by the test")
            for change in params.edit.document_changes or []:
                buf = ls.buffers[change.text_document.uri]
                if change.text_document.version != buf[1]:
                    return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
                buf[0] = apply_text_edits(buf[0], change.edits)
                buf[1] += 1
                ls.text_document_did_change(
                    lsp.DidChangeTextDocumentParams(
                        text_document=lsp.VersionedTextDocumentIdentifier(
                            uri=change.text_document.uri, version=buf[1]
                        ),
                        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=buf[0])],
                    )
                )
            return lsp.ApplyWorkspaceEditResult(applied=True)

        @lsp_client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
        def ask(ls: LanguageClient, params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem:
            ls.asked.append(params.message)
            return lsp.MessageActionItem(title=ls.answer)

        lsp_client.set_configuration({"toolMode": "auto"}, section="kinMemory")
        await lsp_client.initialize_session(
            lsp.InitializeParams(capabilities=client_capabilities(preset), workspace_folders=[])
        )
        yield lsp_client
        await lsp_client.shutdown_session()

    return client


vscode = fixture_for("visual-studio-code")
neovim = fixture_for("neovim")
store_before_the_server = store_built_first(build_store)


@pytest.fixture(params=["vscode", "neovim"])
def client(request):
    return request.getfixturevalue(request.param)


async def tool(client: LanguageClient, **inp) -> dict:
    return await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="kin.memory.tool", arguments=[inp])
    )


async def command(client: LanguageClient, name: str, arg: dict):
    return await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=name, arguments=[arg])
    )


def open_doc(client: LanguageClient, rel: str, text: str | None = None) -> str:
    u = uri(rel)
    text = (STORE / rel).read_text() if text is None else text
    client.buffers[u] = [text, 1]
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=u, language_id="markdown", version=1, text=text)
        )
    )
    return u


async def set_mode(client: LanguageClient, mode: str) -> None:
    client.set_configuration({"toolMode": mode}, section="kinMemory")
    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"kinMemory": {"toolMode": mode}})
    )
    await asyncio.sleep(0.3)


async def wait_for(pred, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


# ---------------------------------------------------------------- the tool


async def test_tool_strings_over_lsp(client):
    listing = await tool(client, command="view", path="/memories/prefs")
    size = len("---\ncategory: preference\n---\nSquash merges.\n")
    assert listing == {
        "content": "Here're the files and directories up to 2 levels deep in /memories/prefs, excluding hidden items:\n"
        f"{size}B\t/memories/prefs\n{size}B\t/memories/prefs/merge.md",
        "isError": False,
    }
    assert await tool(client, command="view", path="/memories/prefs/merge.md", view_range=[4, 4]) == {
        "content": "Here's the content of /memories/prefs/merge.md with line numbers:\n     4\tSquash merges.",
        "isError": False,
    }
    assert await tool(
        client, command="create", path="/memories/ep/a.md", file_text="Ran the migration.\n"
    ) == {
        "content": "File created successfully at: /memories/ep/a.md. The store added 3 lines of frontmatter "
        "(`category: episodic`) above your text, so your first line is now line 4.",
        "isError": False,
    }
    assert (
        STORE / "ep/a.md"
    ).read_text() == "---\ncategory: episodic\n---\nRan the migration.\n"  # no workspace folder: no stamp
    assert await tool(
        client, command="str_replace", path="/memories/ep/a.md", old_str="Ran", new_str="Reran"
    ) == {
        "content": "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     2\tcategory: episodic\n     3\t---\n     4\tReran the migration.\n     5\t",
        "isError": False,
    }
    assert await tool(
        client, command="insert", path="/memories/ep/a.md", insert_line=4, insert_text="Twice."
    ) == {"content": "The file /memories/ep/a.md has been edited.", "isError": False}
    assert await tool(
        client, command="rename", old_path="/memories/ep/a.md", new_path="/memories/ep/b.md"
    ) == {"content": "Successfully renamed /memories/ep/a.md to /memories/ep/b.md", "isError": False}
    assert await tool(client, command="delete", path="/memories/ep/b.md") == {
        "content": "Successfully deleted /memories/ep/b.md",
        "isError": False,
    }
    for inp, text in [
        ({"command": "view", "path": "/memories-x"}, "Path must start with /memories, got: /memories-x"),
        (
            {"command": "view", "path": "/memories/%2e%2e/x"},
            "Path /memories/%2e%2e/x would escape /memories directory",
        ),
        ({"command": "delete", "path": "/memories"}, "Cannot delete the /memories directory itself"),
        (
            {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
            "Cannot rename the /memories directory itself",
        ),
        ({"command": "delete", "path": "/memories/ep/b.md"}, "The path /memories/ep/b.md does not exist"),
    ]:
        assert await tool(client, **inp) == {"content": text, "isError": True}
    with pytest.raises(JsonRpcException, match="command") as info:
        await command(client, "kin.memory.tool", {"path": "/memories"})
    assert info.value.code == -32602  # InvalidParams


async def test_tool_creates_in_a_workspace_stamp(vscode):
    ws = BASE / "repo"
    (ws / ".git").mkdir(parents=True, exist_ok=True)
    settings = {"toolMode": "auto", "workspace": str(ws)}
    vscode.set_configuration(
        settings, section="kinMemory"
    )  # the startup pull may answer after the push below
    vscode.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"kinMemory": settings})
    )
    await asyncio.sleep(0.3)
    res = await tool(
        vscode,
        command="create",
        path="/memories/f/n.md",
        file_text="---\ncategory: project-fact\nsource: x\n---\nbody\n",
    )
    assert res["isError"] is False, res
    await tool(
        vscode, command="create", path="/memories/p/n.md", file_text="---\ncategory: preference\n---\nbody\n"
    )
    assert (
        STORE / "f/n.md"
    ).read_text() == f"---\ncategory: project-fact\nsource: x\nworkspace: {os.path.realpath(ws)}\n---\nbody\n"
    assert (STORE / "p/n.md").read_text() == "---\ncategory: preference\n---\nbody\n"


async def test_apply_edit_on_open_document(client):
    u = open_doc(client, "facts/open.md")
    await asyncio.sleep(0.2)
    res = await tool(
        client, command="str_replace", path="/memories/facts/open.md", old_str="Fridays", new_str="Tuesdays"
    )
    assert res["isError"] is False and "     7\tWe deploy on Tuesdays." in res["content"]
    assert len(client.edits_seen) == 1
    edit = client.edits_seen[0].document_changes[0]
    assert edit.text_document.uri == u and edit.text_document.version == 1
    assert [(e.range.start.line, e.range.end.line, e.new_text) for e in edit.edits] == [
        (6, 7, "We deploy on Tuesdays.\n")
    ]
    disk = (STORE / "facts/open.md").read_text()
    assert client.buffers[u][0] == disk and "Tuesdays" in disk and client.buffers[u][1] == 2
    await asyncio.sleep(0.2)  # the didChange reaches the server: the next edit is against version 2
    res = await tool(
        client, command="insert", path="/memories/facts/open.md", insert_line=4, insert_text="<!-- top -->"
    )
    assert res == {"content": "The file /memories/facts/open.md has been edited.", "isError": False}
    assert client.buffers[u][0] == (STORE / "facts/open.md").read_text()
    assert "\n---\n<!-- top -->\n" in client.buffers[u][0] and client.buffers[u][1] == 3


async def test_unsaved_buffer_and_refused_edit_are_not_clobbered(vscode):
    disk = (STORE / "facts/open.md").read_text()
    open_doc(vscode, "facts/open.md", disk.replace("manual", "manual (unsaved note)"))
    await asyncio.sleep(0.2)
    res = await tool(
        vscode, command="str_replace", path="/memories/facts/open.md", old_str="Fridays", new_str="Mondays"
    )
    assert res == {
        "content": "The file /memories/facts/open.md has unsaved changes in the editor; no edit was performed. "
        "Save or revert it first.",
        "isError": True,
    }
    assert (STORE / "facts/open.md").read_text() == disk and not vscode.edits_seen
    write("facts/other.md", "a\nb\n")
    open_doc(vscode, "facts/other.md")
    await asyncio.sleep(0.2)
    vscode.apply_ok = False
    res = await tool(
        vscode, command="insert", path="/memories/facts/other.md", insert_line=1, insert_text="x"
    )
    assert res == {
        "content": "The editor did not apply the edit to /memories/facts/other.md; no edit was performed.",
        "isError": True,
    }
    assert (STORE / "facts/other.md").read_text() == "a\nb\n"


# ---------------------------------------------------------------- modes and settings


async def test_strict_mode_accept_and_decline(client):
    await set_mode(client, "strict")
    client.answer = "Allow"
    res = await tool(client, command="create", path="/memories/s/yes.md", file_text="x")
    assert res == {
        "content": "File created successfully at: /memories/s/yes.md. The store added 3 lines of frontmatter "
        "(`category: episodic`) above your text, so your first line is now line 4.",
        "isError": False,
    }
    assert client.asked == ["Memory tool wants to create /memories/s/yes.md. Allow?"]
    client.answer = "Deny"
    res = await tool(client, command="delete", path="/memories/s/yes.md")
    assert res == {"content": "The user declined the delete of /memories/s/yes.md", "isError": True}
    assert (STORE / "s/yes.md").exists()
    assert (await tool(client, command="view", path="/memories/s/yes.md"))[
        "isError"
    ] is False  # view never asks
    assert len(client.asked) == 2


async def test_plan_mode_refuses_mutations(vscode):
    await set_mode(vscode, "plan")
    for inp in (
        {"command": "create", "path": "/memories/n.md", "file_text": "x"},
        {
            "command": "str_replace",
            "path": "/memories/prefs/merge.md",
            "old_str": "Squash",
            "new_str": "Rebase",
        },
        {"command": "insert", "path": "/memories/prefs/merge.md", "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": "/memories/prefs/merge.md"},
        {"command": "rename", "old_path": "/memories/prefs/merge.md", "new_path": "/memories/m.md"},
    ):
        assert await tool(vscode, **inp) == {
            "content": f"Memory tool is in plan mode: {inp['command']} is not allowed (view only)",
            "isError": True,
        }
    assert (STORE / "prefs/merge.md").read_text() == "---\ncategory: preference\n---\nSquash merges.\n"
    assert not (STORE / "n.md").exists() and not vscode.asked
    assert (await tool(vscode, command="view", path="/memories/prefs/merge.md"))["isError"] is False


async def test_memory_disabled_names_the_settings_file(vscode):
    (HOME / ".kin").mkdir(parents=True, exist_ok=True)
    (HOME / ".kin" / "settings.toml").write_text("memory_enabled = false\n")
    expected = {
        "content": "Memory is disabled (memory_enabled = false in ~/.kin/settings.toml)",
        "isError": True,
    }
    assert await tool(vscode, command="view", path="/memories") == expected
    assert await tool(vscode, command="create", path="/memories/n.md", file_text="x") == expected
    assert not (STORE / "n.md").exists()
    (HOME / ".kin" / "settings.toml").write_text("memory_enabled = true\n")
    assert (await tool(vscode, command="view", path="/memories"))["isError"] is False


# ---------------------------------------------------------------- sweep and mark reviewed


async def test_sweep_dry_run_then_sweep_with_progress(vscode):
    for i in range(25):
        write(f"episodes/e{i:02}.md", "---\ncategory: episodic\n---\nold\n", age_days=50)
    write("sessions/s.md", "---\ncategory: session\n---\nscratch\n", age_days=2)
    write("episodes/fresh.md", "---\ncategory: episodic\n---\nnew\n", age_days=3)
    write("facts/ancient.md", "---\ncategory: project-fact\n---\nkeep\n", age_days=5000)
    expected = sorted([f"/memories/episodes/e{i:02}.md" for i in range(25)] + ["/memories/sessions/s.md"])
    await wait_for(lambda: any(d.code == "KM402" for d in vscode.diagnostics.get(uri("episodes/e00.md"), [])))
    dry = await command(vscode, "kin.memory.sweep", {"dryRun": True})
    assert dry == {"swept": expected, "kept": 5, "token": dry["token"], "changed": []} and dry["token"]
    assert (STORE / "episodes/e00.md").exists()
    done = await command(vscode, "kin.memory.sweep", {"token": dry["token"]})
    assert done == {"swept": expected, "kept": 5, "token": None, "changed": []}
    assert not any((STORE / p[len("/memories/") :]).exists() for p in expected)
    assert (STORE / "episodes/fresh.md").exists() and (STORE / "facts/ancient.md").exists()
    sweeps = [t for t in vscode.progress_reports if str(t).startswith("kin-memory-sweep-")]
    assert sweeps, vscode.progress_reports.keys()
    reports = vscode.progress_reports[sweeps[0]]
    assert reports[0].kind == "begin" and reports[-1].kind == "end"
    assert any(getattr(r, "percentage", None) == 100 for r in reports)
    await wait_for(lambda: not vscode.diagnostics.get(uri("episodes/e00.md")))
    again = await command(vscode, "kin.memory.sweep", {})
    assert again["swept"] == [] and again["kept"] == 5


async def test_mark_reviewed_quick_fix_and_lens(client):
    u = uri("facts/stale.md")
    diags = await wait_for(lambda: [d for d in client.diagnostics.get(u, []) if d.code == "KM400"])
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=u),
            range=diags[0].range,
            context=lsp.CodeActionContext(diagnostics=diags),
        )
    )
    # lsprotocol structures a CodeAction that carries a command as a Command holding the action's repr
    fixes = [
        ast.literal_eval(a.command)
        for a in actions
        if isinstance(a, lsp.Command) and a.command.startswith("{")
    ]
    assert (
        fixes and fixes[0]["command"] == "kin.memory.markReviewed" and fixes[0]["arguments"] == [{"uri": u}]
    )
    before = (STORE / "facts/stale.md").read_bytes()
    assert await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=fixes[0]["command"], arguments=fixes[0]["arguments"])
    ) == {"ok": True}
    assert time.time() - (STORE / "facts/stale.md").stat().st_mtime < 30
    assert (STORE / "facts/stale.md").read_bytes() == before
    await wait_for(lambda: not any(d.code == "KM400" for d in client.diagnostics.get(u, [])))
    outside = BASE / "outside-fact.md"
    outside.write_text("---\ncategory: project-fact\n---\nx\n")
    os.utime(outside, (1, 1))
    (STORE / "facts/link.md").symlink_to(outside)
    with pytest.raises(Exception, match="escape"):
        await command(client, "kin.memory.markReviewed", {"uri": uri("facts/link.md")})
    assert outside.stat().st_mtime == 1
    with pytest.raises(JsonRpcException, match="uri") as info:
        await command(client, "kin.memory.markReviewed", {})
    assert info.value.code == -32602


# ---------------------------------------------------------------- the edit the editor receives


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("a\nb\nc", "a\nb\nC"),
        ("a\r\nb\r\n", "a\r\nx\nb\r\n"),
        ("", "new\n"),
        ("a\n", ""),
        ("same\n", "same\n"),
        ("x\ry\n", "x\rz\n"),
        ("a\nb", "a\nb\n"),
    ],
)
def test_line_edit_round_trips(old, new):
    assert apply_text_edits(old, [line_edit(old, new, "utf-16")]) == new
