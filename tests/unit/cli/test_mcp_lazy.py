"""The `mcp` SDK is loaded only by `kin-memory mcp`: building the command line and starting the language
server never import it (both must start fast), and the subcommand's help lists the one-line setups."""

from __future__ import annotations

import subprocess
import sys


def test_the_parser_and_the_language_server_do_not_import_the_mcp_sdk():
    code = (
        "import sys\n"
        "from kin_memory.cli import build_parser\n"
        "build_parser()\n"
        "import kin_memory.lsp.server, kin_memory.agent\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_mcp_help_prints_the_setup_lines():
    out = subprocess.run(
        [sys.executable, "-m", "kin_memory", "mcp", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "claude mcp add kin-memory -- kin-memory mcp" in out
    assert '{"mcpServers": {"kin-memory": {"command": "kin-memory", "args": ["mcp"]}}}' in out
    assert "~/.cursor/mcp.json" in out and "claude_desktop_config.json" in out
    assert "tools=[MemoryTool()]" in out
