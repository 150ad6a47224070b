from __future__ import annotations

import os
from pathlib import Path

import pytest
from reflect_helpers import KEY, KEY_ENV, write


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(
        root / "facts" / "deploy.md",
        "---\ncategory: project-fact\nworkspace: global\n---\n# Deploy\n\n"
        "We deploy the billing service with blue-green releases on Fridays.\n",
    )
    write(root / "prefs" / "tone.md", "---\ncategory: preference\n---\nShort answers, no emoji.\n")
    return Path(os.path.realpath(root))


@pytest.fixture
def workspace(tmp_path: Path) -> str:
    ws = tmp_path / "repo"
    ws.mkdir()
    return os.path.realpath(ws)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
