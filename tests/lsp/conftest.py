"""The language server most LSP tests talk to: started on the module's `store` fixture with a private
HOME, initialized, its startup check done; closed at the end, with no traceback in its output."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.rawlsp import RawClient


@pytest.fixture
def client(store: Path, tmp_path: Path) -> Iterator[RawClient]:
    c = RawClient({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)})
    try:
        c.initialize()
        c.wait_checked()
        yield c
    finally:
        assert "Traceback" not in c.close()
