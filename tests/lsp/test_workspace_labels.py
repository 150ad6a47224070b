"""Workspace labels (the seed's `workspace: team-infra`): a workspace value that is not an absolute path
is a label matched verbatim, never a path relative to the current directory. With the editor's workspace
setting or `--workspace` set to a label, the memories stamped with it surface, and diagnostics, recall
(search, body hover, workspace symbols), the prompt block and the command line agree. A relative path or
an unsafe label is refused with a sentence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.memfiles import memory, write
from support.rawlsp import RawClient

LABEL = "team-infra"
INFRA = "# Terraform state\n\nThe terraform state lives in the infra bucket with locking.\n"
INFRA_2 = "# Terraform locks\n\nThe terraform state locking uses the infra lock table.\n"
OTHER = "# Terraform elsewhere\n\nThe terraform state of the web team lives in another bucket.\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    root = h / ".kin" / "memory"
    other_repo = tmp_path / "repos" / "web"
    other_repo.mkdir(parents=True)
    write(root, "facts/infra.md", memory("project-fact", INFRA, LABEL))
    write(root, "facts/infra-2.md", memory("project-fact", INFRA_2, LABEL))
    write(root, "facts/other.md", memory("project-fact", OTHER, str(other_repo.resolve())))
    write(root, "prefs/tone.md", memory("preference", "# Tone\n\nterse answers\n"))
    # a folder named like the label in the directory the CLI runs from: it must not be used
    (tmp_path / "cwd" / LABEL).mkdir(parents=True)
    return h


def env(home: Path) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "KIN_MEMORY_DIR"}, "HOME": str(home)}


def start(home: Path, workspace: str, **more: object) -> RawClient:
    client = RawClient(env(home))
    settings = {"workspace": workspace, **more}
    client.responders["workspace/configuration"] = lambda params: [settings]
    rid = client.request("initialize", {
        "processId": None, "rootUri": None, "workspaceFolders": [],
        "capabilities": {"workspace": {"configuration": True}},
        "initializationOptions": {"kinMemory": settings},
    })  # fmt: skip
    client.wait(lambda m: m.get("id") == rid)
    client.notify("initialized", {})
    client.wait_checked()
    return client


@pytest.fixture
def client(home: Path) -> Iterator[RawClient]:
    c = start(home, LABEL)
    try:
        yield c
    finally:
        assert "Traceback" not in c.close()


def execute(client: RawClient, command: str, arg: object) -> dict:
    reply = client.call("workspace/executeCommand", {"command": command, "arguments": [arg]})
    assert "result" in reply, reply
    return reply["result"]


def open_doc(client: RawClient, home: Path, rel: str) -> str:
    path = home / ".kin" / "memory" / rel
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {
        "textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": path.read_text()}
    })  # fmt: skip
    return uri


def diagnostics_of(client: RawClient, uri: str) -> list[dict]:
    msg = client.wait(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    )
    return msg["params"]["diagnostics"]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kin_memory", *args], capture_output=True, text=True, timeout=60,
        env=env(home), cwd=str(home.parent / "cwd"),
    )  # fmt: skip


def test_the_label_is_the_active_workspace_verbatim(client: RawClient) -> None:
    assert execute(client, "kin.memory.info", {})["workspaces"] == [LABEL]
    assert execute(client, "kin.memory.stats", {})["workspaces"] == [LABEL]


def test_diagnostics_see_labelled_memories_as_this_workspace(client: RawClient, home: Path) -> None:
    infra = open_doc(client, home, "facts/infra.md")
    assert not [d for d in diagnostics_of(client, infra) if d["code"] in ("KM302", "KM303", "KM304")]
    other = open_doc(client, home, "facts/other.md")
    [km303] = [d for d in diagnostics_of(client, other) if d["code"] == "KM303"]
    assert km303["message"].endswith(f"not visible from {LABEL}")


def test_search_hover_and_symbols_surface_labelled_memories_only(client: RawClient, home: Path) -> None:
    found = execute(client, "kin.memory.search", {"query": "terraform state"})
    paths = {r["path"] for r in found["results"]}
    assert paths == {"/memories/facts/infra.md", "/memories/facts/infra-2.md"} and found["hidden"] == 1
    assert all(r["workspace"] == LABEL for r in found["results"])
    uri = open_doc(client, home, "facts/infra.md")
    hover = client.call(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 6}}
    )["result"]
    assert "/memories/facts/infra-2.md" in hover["contents"]["value"]
    assert "other.md" not in hover["contents"]["value"]
    symbols = client.call("workspace/symbol", {"query": "terraform"})["result"]
    names = {s["location"]["uri"].rsplit("/", 1)[-1] for s in symbols}
    assert {"infra.md", "infra-2.md"} <= names and "other.md" not in names


def test_the_prompt_block_lists_labelled_memories(client: RawClient, home: Path) -> None:
    preview = execute(client, "kin.memory.indexPreview", {})
    assert "/memories/facts/infra.md" in preview["text"] and "/memories/facts/other.md" not in preview["text"]
    assert preview["hidden"] == 1
    cli_preview = json.loads(cli(home, "index-preview", "--json", "--workspace", LABEL).stdout)
    assert cli_preview == preview


def test_the_command_line_reads_the_label_verbatim(home: Path) -> None:
    search = json.loads(cli(home, "search", "terraform state", "--json", "--workspace", LABEL).stdout)
    assert {r["path"] for r in search["results"]} == {
        "/memories/facts/infra.md",
        "/memories/facts/infra-2.md",
    }
    check = json.loads(cli(home, "check", "--format", "json", "--workspace", LABEL).stdout)
    km303 = {Path(r["path"]).name for r in check if r["code"] == "KM303"}
    assert km303 == {"other.md"}
    stats = json.loads(cli(home, "stats", "--json", "--workspace", LABEL).stdout)
    assert stats["workspaces"] == [LABEL]
    info = json.loads(cli(home, "info", "--json", "--workspace", LABEL).stdout)
    assert info["workspaces"] == [LABEL] and len(info["settingsFiles"]) == 1  # a label has no project file


@pytest.mark.parametrize(
    ("value", "reason"),
    [("src/app", "is a relative path"), ("./infra", "is a relative path"),
     ("team\u202einfra", "contains control, invisible or bidirectional characters")],
)  # fmt: skip
def test_the_command_line_refuses_what_no_stamp_could_carry(home: Path, value: str, reason: str) -> None:
    out = cli(home, "search", "terraform", "--workspace", value)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("kin-memory: --workspace: the workspace `") and reason in out.stderr
    assert "\u202e" not in out.stderr


def test_a_command_argument_that_is_a_relative_path_is_refused(client: RawClient) -> None:
    reply = client.call(
        "workspace/executeCommand",
        {"command": "kin.memory.search", "arguments": [{"query": "x", "workspace": "a/b"}]},
    )
    assert reply["error"]["message"].startswith("The workspace `a/b` is a relative path"), reply
    labelled = execute(client, "kin.memory.search", {"query": "terraform state", "workspace": LABEL})
    assert len(labelled["results"]) == 2


def test_a_relative_path_setting_is_reported_and_not_used(home: Path) -> None:
    c = start(home, "src/app")
    try:
        shown = c.wait(lambda m: m.get("method") == "window/showMessage")
        assert shown["params"]["message"] == (
            'The setting kinMemory.workspace has an invalid value "src/app" (expected an absolute path, '
            "global, none or a label without /); using the default."
        )
        assert execute(c, "kin.memory.info", {})["workspaces"] == []  # no folder: the operator's view
    finally:
        c.close()


def test_body_hover_can_be_turned_off(home: Path) -> None:
    """`hover.related: off`: no recall hover on body text; the frontmatter's hovers stay."""
    c = start(home, LABEL, hover={"related": "off"})
    try:
        uri = open_doc(c, home, "facts/infra.md")
        body = c.call(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 6}}
        )
        assert body["result"] is None
        key = c.call(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 2}}
        )
        assert "category: project-fact" in key["result"]["contents"]["value"]
    finally:
        c.close()
