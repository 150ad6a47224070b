"""`kin.memory.reflect` end to end: the real server, the real OpenAI SDK against a fake model on
127.0.0.1; the pass returns a proposal, and applying it writes exactly that, with no model request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fake_models import FakeModel, openai_stop, openai_tool_calls
from reflect_helpers import KEY_ENV, snapshot, write

from support.rawlsp import RawClient

NEW = "---\ncategory: preference\n---\n# Tests first\n\nThe user wants tests written before the fix.\n"
CREATE = {"command": "create", "path": "/memories/prefs/tests-first.md", "file_text": NEW}


def start(store: Path, home: Path, fake: FakeModel) -> RawClient:
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(home)})
    settings = {
        "reflection": {
            "provider": "openai",
            "model": "local",
            "baseUrl": fake.url + "/v1",
            "apiKeyEnv": KEY_ENV,
            "timeoutSeconds": 20,
        }
    }
    client.responders["workspace/configuration"] = lambda params: [settings]
    caps = {
        "workspace": {
            "configuration": True,
            "applyEdit": True,
            "workspaceEdit": {
                "documentChanges": True,
                "changeAnnotationSupport": {"groupsOnLabel": True},
                "resourceOperations": ["create", "rename", "delete"],
            },
        }
    }
    rid = client.request(
        "initialize", {"processId": None, "rootUri": None, "capabilities": caps, "workspaceFolders": []}
    )
    client.wait(lambda m: m.get("id") == rid)
    client.notify("initialized", {})
    client.wait_checked()
    return client


def reflect_call(client: RawClient, transcript: Path) -> dict:
    return client.call(
        "workspace/executeCommand",
        {"command": "kin.memory.reflect", "arguments": [{"transcript": transcript.as_uri()}]},
        60,
    )


def command(client: RawClient, name: str, arg: dict) -> dict:
    return client.call("workspace/executeCommand", {"command": name, "arguments": [arg]}, 30)


def test_reflect_proposes_and_apply_writes_exactly_that(store: Path, tmp_path: Path) -> None:
    transcript = write(tmp_path / "t.md", "user: please always write the tests before the fix\n")
    before = snapshot(store)
    with FakeModel([openai_tool_calls(CREATE), openai_stop("Saved the preference.")]) as fake:
        client = start(store, tmp_path, fake)
        try:
            reply = reflect_call(client, transcript)
            assert "error" not in reply, reply
            proposal = reply["result"]
            assert snapshot(store) == before  # a pass never writes
            requests = len(fake.requests)
            listed = command(client, "kin.memory.listProposals", {})["result"]["proposals"]
            applied = command(client, "kin.memory.applyProposal", {"id": proposal["id"]})["result"]
            assert len(fake.requests) == requests  # applying asks the model nothing
            again = command(client, "kin.memory.applyProposal", {"id": proposal["id"]})
        finally:
            stderr = client.close()
    (change,) = proposal["changes"]
    assert change["kind"] == "create" and change["path"] == "/memories/prefs/tests-first.md"
    assert change["before"] is None and change["after"] == NEW and change["newPath"] is None
    assert "+# Tests first" in change["diff"] and "--- /dev/null" in change["diff"]
    assert (
        proposal["source"] == "reflect" and proposal["toolCalls"] == 1 and "1 created" in proposal["summary"]
    )
    assert [p["id"] for p in listed] == [proposal["id"]] and listed[0]["paths"] == [change["path"]]
    assert applied == {"applied": ["/memories/prefs/tests-first.md"], "conflicts": [], "appliedChanges": [0]}
    assert (store / "prefs" / "tests-first.md").read_text() == NEW
    assert "no longer" in again["error"]["message"] or "There is no proposal" in again["error"]["message"]
    assert "SECRET" not in stderr and "Traceback" not in stderr


def test_discard_writes_nothing_and_a_changed_target_is_a_conflict(store: Path, tmp_path: Path) -> None:
    transcript = write(tmp_path / "t.md", "user: tests first\n")
    edit = {
        "command": "str_replace",
        "path": "/memories/facts/deploy.md",
        "old_str": "Fridays",
        "new_str": "Mondays",
    }
    before = snapshot(store)
    with FakeModel(
        [openai_tool_calls(CREATE), openai_stop("ok"), openai_tool_calls(edit), openai_stop("ok")]
    ) as fake:
        client = start(store, tmp_path, fake)
        try:
            first = reflect_call(client, transcript)["result"]
            assert command(client, "kin.memory.discardProposal", {"id": first["id"]})["result"] == {
                "ok": True
            }
            assert snapshot(store) == before
            second = reflect_call(client, transcript)["result"]
            (store / "facts" / "deploy.md").write_text("the agent rewrote this meanwhile\n")
            result = command(client, "kin.memory.applyProposal", {"id": second["id"]})["result"]
        finally:
            client.close()
    assert result["applied"] == [] and result["conflicts"][0]["path"] == "/memories/facts/deploy.md"
    assert "changed since the proposal" in result["conflicts"][0]["reason"]
    assert (store / "facts" / "deploy.md").read_text() == "the agent rewrote this meanwhile\n"


def test_reflect_without_settings_fails_at_once(store: Path, tmp_path: Path) -> None:
    client = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)})
    try:
        client.initialize()
        reply = client.call(
            "workspace/executeCommand",
            {"command": "kin.memory.reflect", "arguments": [{"transcript": "/nowhere.md"}]},
        )
        assert "kinMemory.reflection.provider" in reply["error"]["message"]
        missing = client.call(
            "workspace/executeCommand", {"command": "kin.memory.reflect", "arguments": [{}]}
        )
        assert missing["error"]["code"] == -32602 and "transcript" in missing["error"]["message"]
    finally:
        client.close()


def test_cli_dry_run_prints_a_diff_and_writes_nothing(store: Path, tmp_path: Path) -> None:
    transcript = write(tmp_path / "t.md", "user: tests before the fix, always\n")
    before = snapshot(store)
    with FakeModel([openai_tool_calls(CREATE), openai_stop("ok")]) as fake:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "kin_memory",
                "reflect",
                str(transcript),
                "--root",
                str(store),
                "--provider",
                "openai",
                "--model",
                "m",
                "--base-url",
                fake.url + "/v1",
                "--api-key-env",
                KEY_ENV,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    assert out.returncode == 0, out.stderr
    assert "+++ /memories/prefs/tests-first.md" in out.stdout and "+# Tests first" in out.stdout
    assert "nothing written; apply with: kin-memory proposal apply" in out.stderr
    assert snapshot(store) == before
    cli = [sys.executable, "-m", "kin_memory", "proposal"]
    env = {**os.environ, "HOME": str(tmp_path)}
    listed = json.loads(subprocess.run([*cli, "list", "--json", "--root", str(store)], capture_output=True,
                                       text=True, check=True, env=env).stdout)["proposals"]  # fmt: skip
    (only,) = listed
    assert only["id"] in out.stderr and only["paths"] == ["/memories/prefs/tests-first.md"]
    shown = subprocess.run(
        [*cli, "show", only["id"], "--root", str(store)], capture_output=True, text=True, env=env
    )
    assert "+# Tests first" in shown.stdout
    subprocess.run(
        [*cli, "discard", only["id"], "--root", str(store)], check=True, capture_output=True, env=env
    )
    assert (
        snapshot(store) == before
        and not json.loads(
            subprocess.run(
                [*cli, "list", "--json", "--root", str(store)], capture_output=True, text=True, env=env
            ).stdout
        )["proposals"]
    )
    with FakeModel([openai_tool_calls(CREATE), openai_stop("ok")]) as fake:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "kin_memory",
                "reflect",
                str(transcript),
                "--root",
                str(store),
                "--provider",
                "openai",
                "--model",
                "m",
                "--base-url",
                fake.url + "/v1",
                "--api-key-env",
                KEY_ENV,
                "--yes",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    assert out.returncode == 0, out.stderr
    assert (store / "prefs" / "tests-first.md").read_text() == NEW


def test_a_shortened_transcript_is_told_in_the_proposal_the_editor_shows(store: Path, tmp_path: Path):
    """A session over 10 MB: the proposal's summary (what both editors show above the diffs) says what
    reading it left out, and the model still gets the final decision."""
    from test_transcript_large import DECISION, write_big_session

    session = write_big_session(tmp_path / "big.jsonl")
    with FakeModel([openai_stop("Nothing durable.")]) as fake:
        client = start(store, tmp_path, fake)
        try:
            reply = reflect_call(client, session)
        finally:
            assert "Traceback" not in client.close()
        sent = json.dumps([r.body for r in fake.requests])
    summary = reply["result"]["summary"]
    assert "The transcript was shortened for the model" in summary and "were not read" in summary
    assert json.dumps(DECISION)[1:-1] in sent
