"""The active workspace of an MCP connection: the client's roots, else where the server was started.

A root is a `file://` URI of a folder the client works in. Like an editor's folders: realpath, a linked
git worktree mapped to its main tree, folders inside the store left out (they are the operator's view,
not a project). The first remaining root stamps what the agent writes. A client without roots (or whose
roots are all elsewhere) gets the git top level of the server's working directory, as the CLI does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..store.workspace import active_workspaces, cli_workspace


def path_of_uri(uri: str) -> str | None:
    """The local path of a `file://` URI; None for any other scheme or an impossible name."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = unquote(parsed.path)
    if not path or "\x00" in path or not os.path.isabs(path):
        return None
    return path


def workspace_from_roots(uris: Iterable[str], root: Path) -> str | None:
    """The first root's workspace stamp (realpath, worktree → main tree); None when no root is usable."""
    folders = [p for p in (path_of_uri(u) for u in uris) if p is not None]
    found = active_workspaces(folders, Path(os.path.realpath(root)))
    return found[0] if found else None


def fallback_workspace(root: Path, cwd: str | None = None) -> str | None:
    """The git top level (or realpath) of the working directory when it is outside the store."""
    return cli_workspace(None, Path(os.path.realpath(root)), cwd)
