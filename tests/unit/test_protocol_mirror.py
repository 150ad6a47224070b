"""The editors' copies of the command protocol are generated from `kin_memory.protocol` and kept current.

`scripts/gen_protocol.py --check` fails when `extension-vscode/src/protocol.ts` or the Neovim LuaLS
annotations no longer match the Python declaration; and every `kin.memory.*` command an editor sends
must be one the protocol declares (a typo or a command the server dropped would only show at run time).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kin_memory import protocol

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "scripts" / "gen_protocol.py"
COMMAND_STRING = re.compile(r"""["'](kin\.memory\.[A-Za-z]+)["']""")


def test_generated_mirrors_are_current() -> None:
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr or run.stdout


def _commands_sent(folder: Path, suffix: str, skip: set[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for file in sorted(folder.rglob(f"*{suffix}")):
        if file.name in skip:
            continue
        for name in COMMAND_STRING.findall(file.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(file.relative_to(REPO).as_posix())
    return found


def test_vscode_extension_sends_only_declared_commands() -> None:
    sent = _commands_sent(REPO / "extension-vscode" / "src", ".ts", {"protocol.ts"})
    assert "kin.memory.list" in sent and "kin.memory.info" in sent, sent  # the scan itself works
    unknown = {name: files for name, files in sent.items() if name not in protocol.BY_NAME}
    assert not unknown, f"commands not in kin_memory.protocol.COMMANDS: {unknown}"


def test_neovim_plugin_sends_only_declared_commands() -> None:
    sent = _commands_sent(REPO / "extension-nvim" / "lua", ".lua", {"protocol.lua"})
    assert "kin.memory.search" in sent, sent
    unknown = {name: files for name, files in sent.items() if name not in protocol.BY_NAME}
    assert not unknown, f"commands not in kin_memory.protocol.COMMANDS: {unknown}"
