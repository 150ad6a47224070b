from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    return root
