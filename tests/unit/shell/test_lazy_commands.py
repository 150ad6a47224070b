"""Command groups load on first use: their names are known up front and must be exactly theirs."""

from __future__ import annotations

import importlib
import subprocess
import sys
from unittest.mock import MagicMock

from kin_memory import protocol
from kin_memory.lsp.commands import names

GROUPS = {
    "store": ("StoreCommands", names.STORE),
    "recall": ("RecallCommands", names.RECALL),
    "tool": ("ToolCommand", names.TOOL),
    "sweep": ("SweepCommand", names.SWEEP),
    "reflect": ("ReflectCommand", names.REFLECT),
    "sessions": ("SessionCommands", names.SESSIONS),
    "passes": ("PassCommands", names.PASSES),
    "history": ("HistoryCommands", names.HISTORY),
    "bulk": ("BulkCommands", names.BULK),
    "proposals": ("ProposalCommands", names.PROPOSALS),
    "health": ("HealthCommands", names.HEALTH),
    "sync": ("SyncCommands", names.SYNC),
}


def test_each_group_answers_exactly_its_listed_names() -> None:
    for module, (cls, listed) in GROUPS.items():
        group_type = getattr(importlib.import_module(f"kin_memory.lsp.commands.{module}"), cls)
        group = group_type.__new__(group_type)  # the handler table needs no state
        assert set(group.handlers(MagicMock())) == set(listed), module


def test_the_groups_cover_every_command_once() -> None:
    listed = [name for _, group in GROUPS.values() for name in group]
    assert sorted(listed) == sorted(protocol.BY_NAME) and len(listed) == len(set(listed))


def test_building_the_server_loads_no_command_group() -> None:
    code = (
        "import os, sys; from kin_memory.lsp.server import create_server; create_server(); "
        "print(sorted(m for m in sys.modules if m.startswith(('kin_memory.lsp.commands.', "
        "'kin_memory.proposals', 'kin_memory.reflect', 'kin_memory.recall.results'))), "
        "flush=True); os._exit(0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "['kin_memory.lsp.commands.base', 'kin_memory.lsp.commands.names']"
