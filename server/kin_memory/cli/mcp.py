"""`kin-memory mcp`: the Model Context Protocol server over stdio (the `mcp` SDK is imported only here,
when the subcommand runs)."""

from __future__ import annotations

import argparse

SETUP = """\
setup, one line per client:
  Claude Code     claude mcp add kin-memory -- kin-memory mcp
  Claude Desktop  claude_desktop_config.json: {"mcpServers": {"kin-memory": {"command": "kin-memory", "args": ["mcp"]}}}
  Cursor          ~/.cursor/mcp.json (or .cursor/mcp.json): {"mcpServers": {"kin-memory": {"command": "kin-memory", "args": ["mcp"]}}}
  Anthropic SDK   from kin_memory.agent import MemoryTool; client.beta.messages.tool_runner(model=..., max_tokens=..., messages=..., tools=[MemoryTool()])

The workspace is the client's first root (realpath, a linked worktree as its main tree), else the git
top level of the directory the server starts in; --workspace fixes it. Every write is labelled "agent"
in the history and appears in the editor's review queue.
"""


def register(subparsers, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "mcp",
        parents=[common],
        help="the memory tool, search and the prompt block for agents (MCP over stdio)",
        description="Serve the memory store to an agent over the Model Context Protocol (stdio): tools "
        "`memory` (the Anthropic memory tool) and `memory_search`, resource memory://prompt-block.",
        epilog=SETUP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--tool-mode",
        choices=("auto", "strict", "plan"),
        default="auto",
        help="auto: writes go through; strict: ask the user (MCP elicitation) before each one; plan: refuse them",
    )
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from ..mcp.agents import AgentStore
    from ..mcp.roots import fallback_workspace
    from ..mcp.server import serve
    from ..store.root import resolve_root
    from ..store.workspace import cli_workspace

    root = resolve_root(args.root).path
    fixed: object = ... if args.workspace is None else cli_workspace(args.workspace, root)
    store = AgentStore(root, args.tool_mode, watch=True)  # a rename reads only what may name the old path
    try:
        serve(store, fallback_workspace(root), fixed)
    finally:
        store.close()
    return 0
