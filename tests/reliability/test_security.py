"""The security review, one test per point, through the product's real surfaces (CLI and server)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from reliability_support import COUNTS, check_json, env_for, memory, tool_cli, write

REPO = Path(__file__).resolve().parents[2]
HOSTILE = "<img src=x onerror=alert(1)>[run](command:kin.memory.tool?%7B%7D)![i](http://example.com/t.png)"


def _without_env_root(root: Path, home: Path) -> dict[str, str]:
    # the store found the default way (HOME/.kin/memory), so only a settings file could move it
    assert root == home / ".kin" / "memory"
    return {k: v for k, v in env_for(root, home).items() if k != "KIN_MEMORY_DIR"}


def test_containment_tool_paths_never_leave_the_store(root: Path, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside / "victim.md", "untouched\n")
    (root / "link").symlink_to(outside, target_is_directory=True)
    escapes = [
        "/memories/../outside/victim.md",
        "/memories/%2e%2e/outside/victim.md",
        "/memories/link/victim.md",
        "/memories/..\\outside\\victim.md",
        "/memoriesx/victim.md",
        "/memories/a\x00b.md",
        "/etc/passwd",
    ]
    for path in escapes:
        for call in (
            {"command": "create", "path": path, "file_text": "pwned"},
            {"command": "str_replace", "path": path, "old_str": "untouched", "new_str": "pwned"},
            {"command": "delete", "path": path},
            {"command": "view", "path": path},
        ):
            out = tool_cli(root, home, call)
            assert out.returncode == 1 and "Traceback" not in out.stderr, (path, call, out.stdout, out.stderr)
            assert str(tmp_path) not in out.stdout, out.stdout  # errors name virtual paths only
            COUNTS["security probes"] += 1
    assert (outside / "victim.md").read_text() == "untouched\n"
    assert sorted(p.name for p in outside.iterdir()) == ["victim.md"]


def test_project_settings_cannot_move_the_store(
    root: Path, home: Path, tmp_path: Path, server_factory
) -> None:
    repo = tmp_path / "repo"
    evil = tmp_path / "evil-store"
    evil.mkdir()
    write(repo / ".kin" / "settings.toml", f'memory_dir = "{evil}"\n')
    # the CLI reports the key (KM700) and keeps the store where the user put it
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "check", "--workspace", str(repo), "--format", "json"],
        capture_output=True,
        text=True,
        env=_without_env_root(root, home),
        cwd=str(repo),
        timeout=60,
    )
    assert "Traceback" not in out.stderr, out.stderr
    codes = {(Path(r["path"]).name, r["code"]) for r in json.loads(out.stdout)}
    assert ("settings.toml", "KM700") in codes, codes
    # the server opened on that repository writes into the real store, never the project's choice
    server = server_factory(env=_without_env_root(root, home))
    server.initialize(folders=[repo])
    result = server.tool(
        {"command": "create", "path": "/memories/probe.md", "file_text": memory("preference")}
    )
    assert not result["isError"], result
    assert (root / "probe.md").is_file() and not any(evil.iterdir())
    assert server.shutdown() == 0


def test_workspace_scoped_memory_dir_is_never_asked_for(
    root: Path, home: Path, tmp_path: Path, server_factory
) -> None:
    """VS Code declares memoryDir machine-scoped, and the server asks for its settings without a folder
    scope: a workspace's .vscode/settings.json value never reaches it."""
    manifest = json.loads((REPO / "extension-vscode" / "package.json").read_text(encoding="utf-8"))
    props = {
        k: v
        for c in (
            [manifest["contributes"]["configuration"]]
            if isinstance(manifest["contributes"]["configuration"], dict)
            else manifest["contributes"]["configuration"]
        )
        for k, v in c["properties"].items()
    }
    assert props["kinMemory.memoryDir"]["scope"] in ("machine", "application")
    evil = tmp_path / "evil-store"
    evil.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()

    def answer(item: dict) -> dict:  # a client that would hand out the workspace value when asked for it
        return {"memoryDir": str(evil)} if item.get("scopeUri") else {}

    server = server_factory(config_for=answer, env=_without_env_root(root, home))
    server.initialize(folders=[repo])
    result = server.tool(
        {"command": "create", "path": "/memories/probe.md", "file_text": memory("preference")}
    )
    assert not result["isError"], result
    assert (root / "probe.md").is_file() and not any(evil.iterdir())
    asked = [
        i
        for r in server.server_requests
        if r["method"] == "workspace/configuration"
        for i in r["params"]["items"]
    ]
    assert asked and not any(i.get("scopeUri") for i in asked), asked
    assert server.shutdown() == 0


def _outside_code_spans(markdown: str) -> str:
    return re.sub(r"`[^`]*`", "", markdown)


def test_hover_and_search_output_is_inert(root: Path, server_factory) -> None:
    target = write(
        root / "notes" / "hostile.md",
        f"---\ncategory: {HOSTILE}\nworkspace: global\n---\n# Deploy {HOSTILE}\n\nzebracorn deploy {HOSTILE}\n",
    )
    write(
        root / "notes" / "other.md", memory("project-fact", f"# Other\n\nzebracorn deploy notes {HOSTILE}\n")
    )
    server = server_factory()
    server.initialize()
    uri = server.open(target)
    # the frontmatter hover quotes the hostile value; body (recall) hovers are checked by the recall suite
    shown = [server.hover(uri, 1, 12)["result"]["contents"]["value"]]
    body = server.hover(uri, 6, 3)["result"]
    if body:
        shown.append(body["contents"]["value"])
    assert HOSTILE[:20] in shown[0], shown
    # kin.memory.search answers data (JSON fields), not markdown: bounded snippets, rendered by the client
    search = server.command("kin.memory.search", {"query": "zebracorn deploy"})
    results = search["result"]["results"]
    assert results and all(len(r["snippet"]) <= 400 for r in results), results
    for text in shown:
        live = _outside_code_spans(text)
        assert "<img" not in live and "](command:" not in live and "![" not in live, text
        COUNTS["security probes"] += 1
    assert server.shutdown() == 0


def test_secrets_in_memories_are_flagged(root: Path, home: Path) -> None:
    write(
        root / "creds.md",
        memory(
            "project-fact",
            "aws key AKIAIOSFODNN7EXAMPLE and\ntoken ghp_0123456789abcdefghijABCDEFGHIJ012345\n",
        ),
    )
    rows = [r for r in check_json(root, home) if r["code"] == "KM602"]
    assert len(rows) >= 2, rows
    COUNTS["security probes"] += 1


def test_audit_log_records_every_mutation(root: Path, home: Path) -> None:
    calls = [
        {"command": "create", "path": "/memories/a.md", "file_text": memory("preference")},
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "body text", "new_str": "new text"},
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "absent", "new_str": "x"},
        {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"},
        {"command": "delete", "path": "/memories/b.md"},
        {"command": "create", "path": "/memories/../escape.md", "file_text": "x"},
    ]
    for call in calls:
        tool_cli(root, home, call)
    log = root / ".kin-index" / "audit.jsonl"
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert [(x["command"], x["outcome"]) for x in lines] == [
        ("create", "ok"),
        ("str_replace", "ok"),
        ("str_replace", "error"),
        ("rename", "ok"),
        ("delete", "ok"),
        ("create", "error"),
    ], lines
    assert lines[3]["paths"] == ["/memories/a.md", "/memories/b.md"]
    assert all(str(root) not in json.dumps(x) for x in lines)  # virtual paths only
    COUNTS["security probes"] += 1
