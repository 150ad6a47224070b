"""The Anthropic SDK backend: `MemoryTool`, the SDK's abstract memory tool on the guarded store.

    from anthropic import Anthropic
    from kin_memory.agent import MemoryTool

    runner = Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=2048, messages=[...], tools=[MemoryTool()])

`AsyncMemoryTool` is the same for the SDK's async runner (`AsyncAnthropic().beta.messages.tool_runner`):
each call runs on a worker thread, so the event loop never waits for the disk.

Every call goes through kin-memory's memory tool exactly as `kin-memory mcp` runs it: the guard, the
write-time rules (category rewrite, workspace stamp), atomic writes, history and audit labelled "agent",
so what the agent writes appears in the editor's review queue. An error is raised as the SDK's
`ToolError`, which the runner returns to the model as an `is_error` tool result with the tool's text.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from .mcp.agents import AgentStore
from .mcp.roots import fallback_workspace
from .store.root import resolve_root
from .store.workspace import cli_workspace

__all__ = ["AsyncMemoryTool", "MemoryTool"]


class _Door:
    """What both tool classes share: the store, the workspace and the consent callback, and one call."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None,
        workspace: str | None,
        mode: str,
        confirm: Callable[[str], bool] | None,
    ) -> None:
        store_root = resolve_root(os.fspath(root) if root is not None else None).path
        self.store = AgentStore(Path(store_root), mode)
        self.workspace = (
            fallback_workspace(store_root) if workspace is None else cli_workspace(workspace, store_root)
        )
        self.confirm = confirm

    def call(self, input: object) -> str:  # noqa: A002 - the SDK's name
        result = self.store.tool(input, self.workspace, self.confirm)
        if result.is_error:
            raise ToolError(result.content)
        return result.content


def _as_input(command: Any) -> object:
    return command.to_dict() if hasattr(command, "to_dict") else dict(command)


class MemoryTool(BetaAbstractMemoryTool):
    """The memory tool for `client.beta.messages.tool_runner(tools=[MemoryTool()])`.

    root: the store (default: KIN_MEMORY_DIR, memory_dir in ~/.kin/settings.toml, ~/.kin/memory).
    workspace: the workspace new memories are stamped with (default: the git top level of the current
    directory when it is outside the store; "none" for no stamp, "global" for global memories).
    mode: auto | strict | plan, as the editor's toolMode; strict asks `confirm(description)` before each
    write (no callback: every write is declined).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        *,
        mode: str = "auto",
        confirm: Callable[[str], bool] | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._door = _Door(root, workspace, mode, confirm)
        self.store, self.workspace = self._door.store, self._door.workspace

    def call(self, input: object) -> str:  # noqa: A002 - the SDK's name
        """The tool input exactly as the model emitted it (no SDK model in between: a malformed input
        gets the tool's own message)."""
        return self._door.call(input)

    def _run(self, command: Any) -> str:
        return self.call(_as_input(command))

    # The SDK's abstract methods, for callers that dispatch typed commands themselves (execute()).
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._run(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._run(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._run(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._run(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._run(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._run(command)


class AsyncMemoryTool(BetaAsyncAbstractMemoryTool):
    """`MemoryTool` for the SDK's async tool runner; the same arguments. `confirm` is called on the
    worker thread that runs the write."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        *,
        mode: str = "auto",
        confirm: Callable[[str], bool] | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._door = _Door(root, workspace, mode, confirm)
        self.store, self.workspace = self._door.store, self._door.workspace

    async def call(self, input: object) -> str:  # noqa: A002 - the SDK's name
        return await asyncio.to_thread(self._door.call, input)

    async def _run(self, command: Any) -> str:
        return await self.call(_as_input(command))

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._run(command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._run(command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._run(command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._run(command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._run(command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._run(command)
