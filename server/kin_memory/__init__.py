"""kin-memory: editor backend for an agent's persistent markdown memory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .store import index_hooks as _index_hooks
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


def _stamps_below(root: Path | str, vprefix: str) -> _index_hooks.StampRows | None:
    from .recall.peek import stamps_below

    return stamps_below(root, vprefix)


def _mentioning(root: Path | str, text: str) -> _index_hooks.Mentions | None:
    from .recall.peek import mentioning

    return mentioning(root, text)


def _index_signature(root: Path | str) -> object:
    from .recall.peek import index_signature

    return index_signature(root)


# The tool asks the recall index (beside it) what it already knows: stamps, a path's mentions.
_index_hooks.install(_stamps_below, _mentioning, _index_signature)
