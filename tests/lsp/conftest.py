"""The language server most LSP tests talk to: started on the module's `store` fixture with a private
HOME, initialized, its startup check done; closed at the end, with no traceback in its output."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.rawlsp import RawClient, checked_server


@pytest.fixture
def client(store: Path, tmp_path: Path) -> Iterator[RawClient]:
    with checked_server({**os.environ, "KIN_MEMORY_DIR": str(store), "HOME": str(tmp_path)}) as c:
        yield c
