"""What happens around every write the product makes to the store, without the writer knowing who cares.

The tool, the sweep and the relinking of a rename write memories; history keeps the previous version of
each first and then what the write left. History sits above the tool (a restore writes through the tool's
guard), so the tool cannot import it: it calls `around_write`, and the package root installs history's
hook once (`kin_memory/__init__.py`). With no hook installed a write simply happens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

Around = Callable[[Path | str, list[str | None], str], AbstractContextManager[None]]
_around: Around | None = None


def install(around: Around) -> None:
    """Set what runs around every write (one hook: the package root installs history's)."""
    global _around
    _around = around


@contextlib.contextmanager
def around_write(root: Path | str, vpaths: Iterable[str | None], source: str) -> Iterator[None]:
    """Around one write of the product to these memories (a folder: each memory in it), by `source`."""
    if _around is None:
        yield
        return
    with _around(root, list(vpaths), source):
        yield
