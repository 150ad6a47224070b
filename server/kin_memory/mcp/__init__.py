"""`kin-memory mcp`: the agent's side of the store, as a Model Context Protocol server over stdio.

`agents` is the core every agent door shares (this server and `kin_memory.agent.MemoryTool`): the memory
tool with source "agent", ranked recall and the prompt block, for a workspace. `roots` maps the client's
MCP roots to that workspace. `server` wires them to the official `mcp` SDK, which only this subcommand
imports (nothing else in kin-memory loads it).
"""
