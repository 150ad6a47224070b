"""The memory tool's six commands (reference/memory-tool.md), confined to the store root.

Public entry points (stable; the LSP shell, the CLI and reflection call them):

- ``run(root, workspaces, input, **options) -> {"content": str, "isError": bool}``: one tool call as a
  model emits it (``{"command": "view", "path": "/memories", ...}``) against the store at ``root``.
  ``workspaces`` is the active workspace (a realpath, ``"global"``), a sequence of them (the first one
  stamps new memories), or None (the operator's view: nothing is stamped). Options: ``mode``
  (auto | strict | plan), ``confirm`` (strict mode: ``description -> bool``), ``enabled`` /
  ``disabled_by`` (memory_enabled = false), ``editor`` (an ``Editor`` for files open in an editor).
  Never raises; every failure is an ``isError`` result naming virtual paths only.
- ``run_tool(input, ToolContext) -> ToolResult``: the same with the options in a dataclass.

Every write is a temporary file in the target's directory, fsync, rename: never in place, so a hard-linked
copy of the store (reflection's staging area) is never changed through a shared inode.

Layout: ``base`` (context, result, failure, strict-mode consent), ``params`` (checked parameters and the
guarded path), ``listing`` (the folder view), ``writing`` (reading for an edit, the store lock, the editor
round-trip, the conflict-checked commit), one module per command, and ``dispatch`` (``run_tool``, ``run``).
"""

from __future__ import annotations

from .base import Editor, ToolContext, ToolResult
from .dispatch import run, run_tool

__all__ = ["Editor", "ToolContext", "ToolResult", "run", "run_tool"]
