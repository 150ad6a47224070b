"""kin-memory: editor backend for an agent's persistent markdown memory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .store import write_hook as _write_hook

__version__ = "0.1.0"


@contextmanager
def _keep_versions(root: Path | str, vpaths: list[str | None], source: str) -> Iterator[None]:
    """History keeps the previous version of each memory a write touches, then what it left. Imported at
    the first write: the version database needs sqlite3, which a forked start-up worker never loads."""
    from .history.versions import kept

    with kept(root, vpaths, source):
        yield


# The package root wires the layers: the tool writes, history (above it) keeps the versions.
_write_hook.install(_keep_versions)
