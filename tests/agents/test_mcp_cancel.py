"""A cancelled create is not made when its write had not begun: the official MCP client cancels a
`create` while it waits (strict mode's question still open in the handshake era, or another process
holding the version store in auto mode); the server then writes nothing, even once it could, and goes on
answering. A write that has begun completes (the tool checks for a cancel only before the bytes go to
disk), so no memory is left half-written."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, types


def test_a_create_cancelled_before_its_write_begins_is_not_made(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "memory"
    home.mkdir()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kin_memory", "mcp", "--tool-mode", "strict"],
        env={**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}, cwd=str(home),
    )  # fmt: skip
    asked, release = anyio.Event(), anyio.Event()

    async def elicitation(_ctx: object, _params: object) -> types.ElicitResult:
        asked.set()
        await release.wait()
        return types.ElicitResult(action="accept", content={"allow": True})

    async def scenario() -> tuple[str, bool]:
        scopes: list[anyio.CancelScope] = []
        async with Client(params, mode="legacy", elicitation_callback=elicitation) as client:

            async def create() -> None:
                with anyio.CancelScope() as scope:
                    scopes.append(scope)
                    await client.call_tool(
                        "memory", {"command": "create", "path": "/memories/a.md", "file_text": "x\n"}
                    )

            async with anyio.create_task_group() as tg:
                tg.start_soon(create)
                with anyio.fail_after(30):
                    await asked.wait()
                scopes[0].cancel()  # the client sends notifications/cancelled
                await anyio.sleep(1.0)
                release.set()  # the person allows it, too late
            await anyio.sleep(1.5)
            result = await client.call_tool("memory", {"command": "view", "path": "/memories"})
            text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
            return text, result.is_error

    listing, is_error = anyio.run(scenario)
    assert not is_error and "a.md" not in listing
    assert not (root / "a.md").exists()


def test_a_create_waiting_to_begin_is_not_made_once_cancelled(tmp_path: Path) -> None:
    """Auto mode: the create waits (another process holds the version store while it keeps a version)
    when the client cancels it; once the store is free, the create sees the cancel and writes nothing."""
    import sqlite3

    home, root = tmp_path / "home", tmp_path / "memory"
    home.mkdir()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "kin_memory", "mcp"],
        env={**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}, cwd=str(home),
    )  # fmt: skip

    async def scenario() -> tuple[str, bool]:
        scopes: list[anyio.CancelScope] = []
        async with Client(params) as client:
            await client.call_tool(
                "memory", {"command": "create", "path": "/memories/first.md", "file_text": "x\n"}
            )
            holder = sqlite3.connect(root / ".kin-index" / "history.sqlite3", isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")  # another writer keeps the version store busy

            async def create() -> None:
                with anyio.CancelScope() as scope:
                    scopes.append(scope)
                    await client.call_tool(
                        "memory", {"command": "create", "path": "/memories/a.md", "file_text": "x\n"}
                    )

            async with anyio.create_task_group() as tg:
                tg.start_soon(create)
                await anyio.sleep(1.0)  # the create is in flight, waiting to keep its version
                scopes[0].cancel()
                await anyio.sleep(0.5)
                holder.execute("COMMIT")
                holder.close()
            await anyio.sleep(1.5)
            result = await client.call_tool("memory", {"command": "view", "path": "/memories"})
            text = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
            return text, result.is_error

    listing, is_error = anyio.run(scenario)
    assert not is_error and "first.md" in listing and "a.md" not in listing
    assert not (root / "a.md").exists()
