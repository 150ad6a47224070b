"""`kin.memory.reflect` end to end: the real server, the real OpenAI SDK against a fake model on
127.0.0.1, and a client that accepts or declines the `workspace/applyEdit` refactor preview."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
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


@pytest.mark.parametrize("answer", [True, False])
def test_reflect_goes_through_the_editors_review(store: Path, tmp_path: Path, answer: bool) -> None:
    transcript = write(tmp_path / "t.md", "user: please always write the tests before the fix\n")
    before = snapshot(store)
    seen: list[dict] = []

    def review(params: dict) -> dict:
        seen.append(params)
        return {"applied": answer}

    with FakeModel([openai_tool_calls(CREATE), openai_stop("Saved the preference.")]) as fake:
        client = start(store, tmp_path, fake)
        client.responders["workspace/applyEdit"] = review
        try:
            reply = client.call(
                "workspace/executeCommand",
                {"command": "kin.memory.reflect", "arguments": [{"transcript": transcript.as_uri()}]},
                60,
            )
        finally:
            stderr = client.close()
    assert "error" not in reply, reply
    result = reply["result"]
    assert result["changes"] == [
        {
            "kind": "create",
            "path": "/memories/prefs/tests-first.md",
            "from": None,
            "folder": False,
            "conflict": False,
        }
    ]
    assert result["applied"] is answer
    (edit,) = seen
    ops = edit["edit"]["documentChanges"]
    assert ops[0]["kind"] == "create" and ops[0]["uri"].endswith("/prefs/tests-first.md")
    assert ops[1]["edits"][0]["newText"] == NEW
    assert all(
        op.get("annotationId") or all(e.get("annotationId") for e in op.get("edits", [])) for op in ops
    )
    assert edit["edit"]["changeAnnotations"]["kin-memory-reflection"]["needsConfirmation"] is True
    assert snapshot(store) == before  # the server never writes behind the editor's back
    assert ("Applied in the editor" if answer else "Declined") in result["summary"]
    assert "SECRET" not in stderr and "Traceback" not in stderr


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
    assert "not applied: pass --yes" in out.stderr
    assert snapshot(store) == before
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
