"""What a worker keeps for after its answer: a few thousand items in memory, the rest in a scratch file.

A cold start's worker makes an entry per file for the findings cache (its record and rendered
diagnostics, about 1 KB) and turns them into segment snapshots once the server has its answer. Held in
memory until then, a 100k store's entries would add some 50 MB to each worker at the moment the
server's own memory peaks; pickled to a file of the hidden folder in batches they cost a few
hundredths of a second and no memory. The file has no name (it is gone when the worker is) and is read
back in the order it was written.
"""

from __future__ import annotations

import logging
import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ....store.paths import hidden_problem

log = logging.getLogger("kin_memory.lsp")

HELD = 2_000  # items kept in memory before they are written to the scratch file, as one batch


class _Spill:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.held: list[Any] = []
        self.file: IO[bytes] | None = None
        self.batches = 0  # batches written whole
        self.failed = False

    def add(self, item: Any) -> bool:
        """Keep `item` for `taken`; False when it cannot be (no scratch file could be written): it is
        not kept then, nor anything after it, and what was kept is still in `taken`."""
        if self.failed:
            return False
        self.held.append(item)
        if len(self.held) < HELD:
            return True
        try:
            if self.file is None:
                # Made by name, as SQLite opens the cache beside it: the folder is asked first, and a
                # link there (a hidden folder is never followed out of the store) gets no scratch file.
                problem = hidden_problem(self.folder.parent)
                if problem is not None:
                    raise OSError(problem)
                self.file = tempfile.TemporaryFile(dir=self.folder, prefix="spill-")
            pickle.dump(self.held, self.file, pickle.HIGHEST_PROTOCOL)
        except (OSError, pickle.PicklingError) as exc:
            log.info("no scratch file for the findings cache entries (%s): written as they come", exc)
            self.failed = True
            self.held.pop()
            return False
        self.batches += 1
        self.held = []
        return True

    def taken(self) -> Iterator[Any]:
        """Every item kept, in the order they came (a batch in memory at a time); then the spill is
        empty. A scratch file that cannot be read back ends with what was read (its files then get no
        snapshot: the next start checks them)."""
        file, batches, self.file, self.batches = self.file, self.batches, None, 0
        if file is not None:
            with file:
                try:
                    file.flush()
                    file.seek(0)
                    for _ in range(batches):
                        yield from pickle.load(file)
                except (OSError, EOFError, pickle.UnpicklingError) as exc:
                    log.info("the scratch file of the findings cache entries could not be read: %s", exc)
                    self.held = []
        held, self.held = self.held, []
        yield from held
