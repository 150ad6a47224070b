"""One workspace per repository, in every door: an agent working in a monorepo package (a subfolder of a
git repository) stamps the repository's top level through the official MCP client with a root there and
without roots (started there), the command line started there, the SDK's `MemoryTool` given the folder,
and the language server opened on it; each door sees what every other wrote. A memory stamped with a
subfolder before this rule stays visible from the whole repository, with a diagnostic whose quick fix
offers the top level."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kin_memory.agent import MemoryTool
from support.mcp_client import git, mcp_session
from support.memfiles import memory, write
from support.rawlsp import RawClient

Call = Callable[[dict], tuple[str, bool]]
DOORS = ["mcp-root", "mcp-no-roots", "cli", "sdk", "lsp"]


@pytest.fixture
def monorepo(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(store, home, the repository's top, its `services/api` package), realpaths."""
    home = tmp_path / "home"
    home.mkdir()
    top = tmp_path / "mono"
    (top / "services" / "api").mkdir(parents=True)
    (top / "services" / "web").mkdir(parents=True)
    git(top, "init", "-q")
    top = Path(os.path.realpath(top))
    root = tmp_path / "memory"
    legacy = memory(
        "project-fact", "# Old\n\nThe api package was stamped with its folder.\n", str(top / "services/api")
    )
    write(root, "facts/legacy.md", legacy)
    return root, home, top, top / "services" / "api"


@contextmanager
def door(name: str, root: Path, home: Path, folder: Path) -> Iterator[Call]:
    env = {**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}
    if name == "mcp-root":
        with mcp_session(root, home, home, roots=[folder.as_uri()]) as s:
            yield lambda inp: s.call("memory", inp)
    elif name == "mcp-no-roots":
        with mcp_session(root, home, folder) as s:
            yield lambda inp: s.call("memory", inp)
    elif name == "cli":

        def cli(inp: dict) -> tuple[str, bool]:
            out = subprocess.run(
                [sys.executable, "-m", "kin_memory", "tool", "-", "--root", str(root)],
                input=json.dumps(inp), capture_output=True, text=True, timeout=60, env=env, cwd=str(folder),
            )  # fmt: skip
            assert "Traceback" not in out.stderr, out.stderr
            return out.stdout.removesuffix("\n"), out.returncode == 1

        yield cli
    elif name == "sdk":
        from anthropic.lib.tools import ToolError

        tool = MemoryTool(root, str(folder))

        def sdk(inp: dict) -> tuple[str, bool]:
            try:
                return tool.call(inp), False
            except ToolError as exc:
                return str(exc.content), True

        yield sdk
    else:
        client = RawClient.started(env, folders=(folder,))

        def lsp(inp: dict) -> tuple[str, bool]:
            reply = client.call(
                "workspace/executeCommand", {"command": "kin.memory.tool", "arguments": [inp]}
            )
            return reply["result"]["content"], reply["result"]["isError"]

        try:
            yield lsp
        finally:
            assert "Traceback" not in client.close()


def stamp(root: Path, rel: str) -> str:
    text = (root / rel).read_text()
    return next(line for line in text.splitlines() if line.startswith("workspace: "))[len("workspace: ") :]


@pytest.mark.parametrize("name", DOORS)
def test_every_door_stamps_the_repositorys_top_level_from_a_package(monorepo, name: str) -> None:
    root, home, top, api = monorepo
    write(
        root,
        "facts/from-web.md",
        memory("project-fact", "# Web\n\nThe web package builds with vite.\n", str(top)),
    )
    with door(name, root, home, api) as call:
        text, err = call(
            {"command": "create", "path": f"/memories/facts/{name}.md", "file_text": "# Note\n\nx\n"}
        )
        assert not err, text
        listing, err = call({"command": "view", "path": "/memories/facts"})
        assert not err and "from-web.md" in listing and "legacy.md" in listing, listing
        text, err = call({"command": "view", "path": "/memories/facts/legacy.md"})
        assert not err and "stamped with its folder" in text
    assert stamp(root, f"facts/{name}.md") == str(top)


def test_a_memory_written_from_one_package_is_seen_from_another_and_from_the_top(monorepo) -> None:
    root, home, top, api = monorepo
    with door("mcp-root", root, home, api) as call:
        assert (
            call({"command": "create", "path": "/memories/facts/api.md", "file_text": "# Api\n"})[1] is False
        )
    for folder in (top / "services" / "web", top):
        with door("cli", root, home, folder) as call:
            listing, _ = call({"command": "view", "path": "/memories"})
            assert "api.md" in listing and "legacy.md" in listing, listing


def test_a_subfolder_stamp_is_seen_elsewhere_only_from_its_own_repository(monorepo, tmp_path) -> None:
    root, home, _top, _api = monorepo
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    with door("cli", root, home, other) as call:
        listing, _ = call({"command": "view", "path": "/memories"})
        assert "legacy.md" not in listing


def test_the_language_server_offers_the_top_level_for_a_subfolder_stamp(monorepo) -> None:
    root, home, top, _api = monorepo
    env = {**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}
    client = RawClient.started(env, folders=(top,))
    try:
        uri = (Path(os.path.realpath(root)) / "facts" / "legacy.md").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": (root / "facts/legacy.md").read_text()}})  # fmt: skip
        found = client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and any(d.get("code") == "KM307" for d in m["params"]["diagnostics"])
            )
        )
        diag = next(d for d in found["params"]["diagnostics"] if d["code"] == "KM307")
        reply = client.call("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}})  # fmt: skip
        titles = [a["title"] for a in reply["result"]]
        assert f"Replace with {top}" in titles, titles
    finally:
        assert "Traceback" not in client.close()


def test_search_finds_a_subfolder_stamped_memory_from_the_repository(monorepo) -> None:
    root, home, top, _api = monorepo
    with mcp_session(root, home, top) as s:
        found, err = s.call("memory_search", {"query": "stamped folder package"})
    assert not err and "/memories/facts/legacy.md" in found, found


def test_search_finds_a_memory_stamped_with_a_linked_worktree_from_the_repository(monorepo, tmp_path) -> None:
    root, home, top, _api = monorepo
    git(top, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first")
    wt = tmp_path / "mono-feature"
    git(top, "worktree", "add", "-q", str(wt))
    wt = Path(os.path.realpath(wt))
    stamped = memory(
        "project-fact", "# Feature\n\nThe feature branch builds with zig.\n", str(wt / "services/web")
    )
    write(root, "facts/feature.md", stamped)
    write(
        root,
        "facts/tree.md",
        memory("project-fact", "# Tree\n\nThe worktree itself builds with zig too.\n", str(wt)),
    )
    with mcp_session(root, home, top) as s:
        found, err = s.call("memory_search", {"query": "builds with zig"})
    assert not err and "/memories/facts/feature.md" in found and "/memories/facts/tree.md" in found, found
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    with mcp_session(root, home, other) as s:
        found, err = s.call("memory_search", {"query": "builds with zig"})
    assert "/memories/facts/feature.md" not in found and "/memories/facts/tree.md" not in found, found
