"""`kin.memory.init`, `kin.memory.consolidationCandidates` and `kin.memory.consolidate` through the real
server (Anthropic SDK against a fake model on 127.0.0.1), and `kin-memory init` / `consolidate` on the
command line (OpenAI SDK): proposals reviewed, then applied exactly as shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fake_models import FakeModel, anthropic_end, anthropic_tool_use, openai_stop, openai_tool_calls
from reflect_helpers import KEY_ENV, snapshot, write
from test_consolidate_pass import messy  # noqa: F401 - the fixture

from support.rawlsp import RawClient

FACT = "---\ncategory: project-fact\n---\n# Widget build\n\nBuild with `make`; test with `make test`.\n"
CREATE = {"command": "create", "path": "/memories/facts/widget.md", "file_text": FACT}


def start(store: Path, home: Path, fake: FakeModel | None, folder: Path) -> RawClient:
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(home)})
    reflection = {"provider": "anthropic", "model": "claude-test", "baseUrl": fake.url, "apiKeyEnv": KEY_ENV,
                  "timeoutSeconds": 20} if fake else {}  # fmt: skip
    client.responders["workspace/configuration"] = lambda params: [{"reflection": reflection}]
    caps = {"workspace": {"configuration": True, "applyEdit": True, "workspaceFolders": True}}
    folders = [{"uri": folder.as_uri(), "name": folder.name}]
    rid = client.request(
        "initialize",
        {"processId": None, "rootUri": folder.as_uri(), "capabilities": caps, "workspaceFolders": folders},
    )
    client.wait(lambda m: m.get("id") == rid)
    client.notify("initialized", {})
    client.wait_checked()
    return client


def command(client: RawClient, name: str, arg: dict, timeout: float = 60) -> dict:
    return client.call("workspace/executeCommand", {"command": name, "arguments": [arg]}, timeout)


def repo_with_docs(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    write(repo / "AGENTS.md", "# Agents\n\nBuild with `make`; test with `make test`.\n")
    write(repo / "docs" / "intro.md", "# Intro\n\nWidget renders dashboards.\n")
    return Path(os.path.realpath(repo))


def test_init_in_the_editor_proposes_for_the_open_folder_and_applies_as_shown(
    store: Path, tmp_path: Path
) -> None:
    repo = repo_with_docs(tmp_path)
    before = snapshot(store)
    with FakeModel([anthropic_tool_use(CREATE), anthropic_end("Saved the build.")]) as fake:
        client = start(store, tmp_path, fake, repo)
        try:
            reply = command(client, "kin.memory.init", {})
            assert "error" not in reply, reply
            proposal = reply["result"]
            assert snapshot(store) == before
            applied = command(client, "kin.memory.applyProposal", {"id": proposal["id"]})["result"]
        finally:
            stderr = client.close()
    assert proposal["source"] == "init" and proposal["workspace"] == str(repo)
    assert proposal["summary"].startswith("Read 2 documents")
    (change,) = proposal["changes"]
    assert change["path"] == "/memories/facts/widget.md" and f"workspace: {repo}\n" in change["after"]
    assert applied == {"applied": ["/memories/facts/widget.md"], "conflicts": [], "appliedChanges": [0]}
    assert (store / "facts" / "widget.md").read_text() == change["after"]
    assert "Traceback" not in stderr and "SECRET" not in stderr


def test_candidates_and_consolidate_in_the_editor(messy: Path, workspace: str, tmp_path: Path) -> None:  # noqa: F811
    fix = {
        "command": "str_replace",
        "path": "/memories/facts/db-old.md",
        "old_str": "5433",
        "new_str": "5432",
    }
    drop = {"command": "delete", "path": "/memories/facts/deploy-copy.md"}
    with FakeModel([anthropic_tool_use(fix, drop), anthropic_end("Fixed.")]) as fake:
        client = start(messy, tmp_path, fake, Path(workspace))
        try:
            listed = command(client, "kin.memory.consolidationCandidates", {})["result"]["candidates"]
            operator = command(client, "kin.memory.consolidationCandidates", {"workspace": "none"})["result"]
            proposal = command(client, "kin.memory.consolidate", {})["result"]
            applied = command(client, "kin.memory.applyProposal", {"id": proposal["id"]})["result"]
        finally:
            client.close()
    assert [(c["kind"], c["paths"]) for c in listed] == [
        ("contradiction", ["/memories/facts/db-old.md", "/memories/facts/db.md"]),
        ("duplicate", ["/memories/facts/deploy-copy.md", "/memories/facts/deploy.md"]),
    ]
    assert listed[0]["uris"] == [
        (messy / "facts" / "db-old.md").as_uri(),
        (messy / "facts" / "db.md").as_uri(),
    ]
    assert listed[0]["reason"].endswith("disagree: port 5433 vs 5432")
    assert any("/memories/facts/other.md" in c["paths"] for c in operator["candidates"])
    assert proposal["source"] == "consolidate" and len(proposal["changes"]) == 2
    assert sorted(applied["applied"]) == ["/memories/facts/db-old.md", "/memories/facts/deploy-copy.md"]
    assert not (messy / "facts" / "deploy-copy.md").exists()
    assert "port is 5432" in (messy / "facts" / "db-old.md").read_text()


def test_passes_without_a_provider_fail_with_the_settings_to_set(store: Path, tmp_path: Path) -> None:
    repo = repo_with_docs(tmp_path)
    client = start(store, tmp_path, None, repo)
    try:
        init = command(client, "kin.memory.init", {})
        cons = command(client, "kin.memory.consolidate", {})
        cands = command(client, "kin.memory.consolidationCandidates", {})
    finally:
        client.close()
    for reply in (init, cons):
        assert "kinMemory.reflection.provider" in reply["error"]["message"]
    assert cands["result"] == {"candidates": []}


def cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kin_memory", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(home)})  # fmt: skip


def test_cli_init_and_consolidate(store: Path, messy: Path, workspace: str, tmp_path: Path) -> None:  # noqa: F811
    repo = repo_with_docs(tmp_path)
    before = snapshot(store)
    with FakeModel(
        [openai_tool_calls(CREATE), openai_stop("ok"), openai_tool_calls(CREATE), openai_stop("ok")]
    ) as fake:
        flags = [
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            fake.url + "/v1",
            "--api-key-env",
            KEY_ENV,
        ]
        dry = cli("init", str(repo), "--root", str(store), *flags, home=tmp_path)
        assert dry.returncode == 0, dry.stderr
        assert "+++ /memories/facts/widget.md" in dry.stdout and "Read 2 documents" in dry.stderr
        assert snapshot(store) == before
        done = cli("init", str(repo), "--root", str(store), "--yes", "--json", *flags, home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "applied": ["/memories/facts/widget.md"],
        "conflicts": [],
        "appliedChanges": [0],
    }
    assert f"workspace: {repo}\n" in (store / "facts" / "widget.md").read_text()
    listed = cli("consolidate", "--root", str(messy), "--workspace", workspace, "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    kinds = [(c["kind"], c["paths"]) for c in json.loads(listed.stdout)["candidates"]]
    assert kinds == [
        ("contradiction", ["/memories/facts/db-old.md", "/memories/facts/db.md"]),
        ("duplicate", ["/memories/facts/deploy-copy.md", "/memories/facts/deploy.md"]),
    ]
    text = cli("consolidate", "--root", str(messy), "--workspace", workspace, home=tmp_path)
    assert "contradiction: /memories/facts/db-old.md and /memories/facts/db.md disagree" in text.stdout
