from __future__ import annotations

from pathlib import Path

import pytest

from kin_memory.tool.commands import ToolContext, ToolResult, run_tool


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "store"
    r.mkdir()
    return r


@pytest.fixture
def run(root: Path):
    def _run(ctx: ToolContext | None = None, **inp) -> ToolResult:
        return run_tool(inp, ctx or ToolContext(root=root))

    return _run
