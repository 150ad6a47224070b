"""Every string the Neovim plugin can show (its Lua string literals and its help file) is in Neovim's
terms: no VS Code setting name (`kinMemory.staleDays`: Neovim users set `settings.staleDays` in setup)
and no Python exception class name or traceback."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LUA = sorted((ROOT / "extension-nvim" / "lua" / "kin_memory").glob("*.lua"))
HELP = ROOT / "extension-nvim" / "doc" / "kin-memory.txt"

# Editor command ids the server names in its code actions: registered with vim.lsp.commands, never shown.
COMMAND_IDS = {"kinMemory.confirmDelete", "kinMemory.restamp", "kinMemory.compareConflict"}
STRING = re.compile(r"'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"")
VSCODE_SETTING = re.compile(r"kinMemory\.[A-Za-z.]+")
PYTHON_ERROR = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception)\b|Traceback|Errno")


def lua_strings(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    code = "\n".join(
        line.split("--", 1)[0] if line.lstrip().startswith("--") else line for line in text.splitlines()
    )
    return [a or b for a, b in STRING.findall(code)]


def test_the_plugin_has_messages_to_check() -> None:
    strings = [s for p in LUA if p.name != "protocol.lua" for s in lua_strings(p)]
    assert len(strings) > 300
    assert any("KinMemoryRestart starts it" in s for s in strings)


def test_no_vscode_setting_names_or_python_errors_in_lua_strings() -> None:
    for path in LUA:
        if path.name == "protocol.lua":  # LuaLS annotations generated from the protocol, nothing shown
            continue
        for s in lua_strings(path):
            names = set(VSCODE_SETTING.findall(s)) - COMMAND_IDS
            assert not names, f"{path.name}: {s!r} names a VS Code setting"
            assert not PYTHON_ERROR.search(s), f"{path.name}: {s!r} names a Python exception"


def test_help_file_speaks_neovim() -> None:
    text = HELP.read_text(encoding="utf-8")
    assert not VSCODE_SETTING.findall(text)
    assert not PYTHON_ERROR.search(text)
