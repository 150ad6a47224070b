"""Memory URIs as the editor knows them. A start publishes tens of thousands, so the plain case (a path
that needs no quoting) is joined as strings; anything else goes through pygls's own conversion.

Light to import: the start-up workers make URIs before the LSP stack is loaded."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..store.root import VIRTUAL_ROOT

_PLAIN_REL = re.compile(r"(?:[A-Za-z0-9_~-][A-Za-z0-9_.~-]*/)*[A-Za-z0-9_~-][A-Za-z0-9_.~-]*")
_VIRTUAL_PREFIX = VIRTUAL_ROOT + "/"


def path_to_uri(path: Path | str) -> str:
    from pygls.uris import from_fs_path  # light: no lsprotocol

    return from_fs_path(str(path)) or ""


def plain_uri(root_uri: str, vpath: str) -> str | None:
    """The URI of a memory whose path needs no quoting, joined to its store's URI (no trailing slash):
    what path_to_uri makes of it, for a fraction of the cost. None for any other path."""
    rel = vpath[len(_VIRTUAL_PREFIX) :]
    if not vpath.startswith(_VIRTUAL_PREFIX) or os.sep != "/" or not _PLAIN_REL.fullmatch(rel):
        return None
    return f"{root_uri}/{rel}"


def root_uri(root: Path | str) -> str:
    return path_to_uri(root).rstrip("/")
