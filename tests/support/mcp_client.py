"""A real MCP client (the official SDK, over stdio) talking to a `kin-memory mcp` child process, usable
from synchronous tests (hypothesis included): the client runs on an event loop in a portal thread."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters, types


class Session:
    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self.portal = portal
        self.client = client

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """(text, is_error) of one tool call."""
        result = self.portal.call(self.client.call_tool, name, arguments)
        return "".join(c.text for c in result.content if isinstance(c, types.TextContent)), result.is_error

    def memory(self, **inp: Any) -> tuple[str, bool]:
        return self.call("memory", inp)

    def resource(self, uri: str) -> str:
        result = self.portal.call(self.client.read_resource, uri)
        return "".join(c.text for c in result.contents if isinstance(c, types.TextResourceContents))

    def tools(self) -> list[types.Tool]:
        return self.portal.call(self.client.list_tools).tools


def server_env(home: Path, root: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "KIN_MEMORY_DIR": str(root)}


@contextmanager
def mcp_session(
    root: Path,
    home: Path,
    cwd: Path,
    *,
    args: tuple[str, ...] = (),
    roots: list[str] | None = None,
    elicit: Callable[[str], types.ElicitResult] | None = None,
    mode: str = "auto",
) -> Iterator[Session]:
    """`kin-memory mcp ARGS` for the store at `root`, started in `cwd`. `roots`: the file URIs the client
    declares (None: no roots capability); `elicit`: the user's answer to a strict-mode question (None: no
    elicitation capability); `mode`: "auto" (the 2026 era) or "legacy" (the initialize handshake)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kin_memory", "mcp", *args],
        env=server_env(home, root),
        cwd=str(cwd),
    )

    async def list_roots(_ctx: object) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=u) for u in roots or []])

    async def elicitation(_ctx: object, params: Any) -> types.ElicitResult:
        assert elicit is not None
        return elicit(params.message)

    client = Client(
        params,
        mode=mode,
        list_roots_callback=list_roots if roots is not None else None,
        elicitation_callback=elicitation if elicit is not None else None,
    )
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(client) as connected:
        yield Session(portal, connected)


def cli(home: Path, root: Path, cwd: Path, *args: str) -> str:
    """`kin-memory ARGS`' standard output, with the environment the server gets."""
    done = subprocess.run(
        [sys.executable, "-m", "kin_memory", *args],
        env=server_env(home, root),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        check=True,
        capture_output=True,
    )
