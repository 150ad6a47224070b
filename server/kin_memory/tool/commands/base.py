"""What every command shares: the call's context and result, the failure a command raises, and the
strict-mode confirmation asked before a mutation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ...store.workspace import with_equivalents
from .. import messages

MODES = ("auto", "strict", "plan")
MUTATIONS = ("create", "str_replace", "insert", "delete", "rename")


class Editor(Protocol):
    """Files open in an editor: their edits go through the editor so buffer and undo stay in sync."""

    def buffer(self, path: Path) -> tuple[str, object] | None:
        """(text, version) of the open document for this real path, None when it is not open."""

    def apply(self, path: Path, version: object, old_text: str, new_text: str) -> bool:
        """Ask the editor to turn old_text into new_text in its buffer; True when it applied the edit."""


@dataclass
class ToolContext:
    root: Path
    workspace: str | None = None
    mode: str = "auto"
    enabled: bool = True
    disabled_by: str | None = None
    confirm: Callable[[str], bool] | None = None
    editor: Editor | None = None
    source: str = "tool"  # who the history says wrote what this call writes (the sweep says "sweep")
    # The workspaces whose memories this call may reach (tool/visibility.py); None: the one `workspace`
    # names, or the operator's view (everything) when that is None too.
    visible_from: tuple[str, ...] | None = None
    # Whether the caller cancelled this call (an MCP `notifications/cancelled`): a write that has not
    # begun is then not made; one that has begun completes (see check_cancelled).
    cancelled: Callable[[], bool] | None = None
    # Which files a rename of a path must read to relink references to it, when the caller can tell
    # without a look at every file (the MCP server's watch: mcp/rename_reads.py); None: it cannot.
    rename_reads: Callable[[str], list[tuple[str, str, bool]] | None] | None = None

    @property
    def active(self) -> tuple[str, ...]:
        own = self.visible_from if self.visible_from is not None else (self.workspace,)
        return with_equivalents(own, self.root)


@dataclass
class ToolResult:
    content: str
    is_error: bool


class ToolFailure(Exception):
    """A command failure carrying the message shown to the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_cancelled(ctx: ToolContext, command: str, path: str) -> None:
    """Asked where a write is about to begin (before the command runs, after strict mode's question, and
    just before the bytes go to disk): a call cancelled by then changes nothing. Past this point the
    write completes, so a memory is never left half-written by a cancel."""
    if ctx.cancelled is not None and ctx.cancelled():
        raise ToolFailure(messages.cancelled(command, path))


def confirm(ctx: ToolContext, command: str, path: str, description: str) -> None:
    """Strict mode asks before every mutation; no callback, a failing one or a "no" all decline."""
    if ctx.mode != "strict":
        return
    ok = False
    if ctx.confirm is not None:
        try:
            ok = bool(ctx.confirm(description))
        except Exception:
            ok = False
    if not ok:
        raise ToolFailure(messages.declined(command, path))
    check_cancelled(ctx, command, path)  # the person may take a while to answer
