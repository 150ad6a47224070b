"""Reflection works after the README's plain install: `pip install .` into a fresh virtual environment,
then `kin-memory reflect` against a fake Anthropic server — no extra to remember, no second step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fake_models import FakeModel, anthropic_end, anthropic_tool_use
from reflect_helpers import KEY_ENV, snapshot, write

REPO = Path(__file__).resolve().parents[2]
NEW = "---\ncategory: preference\n---\n# Small commits\n\nThe user prefers small, focused commits.\n"


def test_a_plain_install_can_reflect(store: Path, tmp_path: Path) -> None:
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", str(REPO)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    transcript = write(tmp_path / "chat.md", "user: I like small, focused commits. Remember that.\n")
    before = snapshot(store)
    create = {"command": "create", "path": "/memories/prefs/small-commits.md", "file_text": NEW}
    with FakeModel([anthropic_tool_use(create), anthropic_end("Saved.")]) as fake:
        out = subprocess.run(
            [str(venv / "bin" / "kin-memory"), "reflect", str(transcript), "--root", str(store),
             "--provider", "anthropic", "--model", "m", "--base-url", fake.url, "--api-key-env", KEY_ENV, "--json"],
            capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)},
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    proposal = json.loads(out.stdout)
    assert [(c["kind"], c["path"], c["after"]) for c in proposal["changes"]] == [
        ("create", "/memories/prefs/small-commits.md", NEW)
    ]
    assert snapshot(store) == before  # proposed, not written
