"""An agent's turn for the editor end-to-end tests: one memory-tool call through `kin-memory mcp`, made
with the official MCP client over stdio, as Claude Code or Cursor would make it.

    python mcp_agent.py STORE '{"command": "create", "path": "/memories/...", "file_text": "..."}'

Prints the tool's answer; exit status 1 when it is an error.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters, types


async def call(store: str, tool_input: dict) -> tuple[str, bool]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kin_memory", "mcp"],
        env={**os.environ, "KIN_MEMORY_DIR": store},
    )
    async with Client(params) as client:
        result = await client.call_tool("memory", tool_input)
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent)), result.is_error


def main() -> int:
    text, is_error = asyncio.run(call(sys.argv[1], json.loads(sys.argv[2])))
    print(text)
    return 1 if is_error else 0


if __name__ == "__main__":
    sys.exit(main())
