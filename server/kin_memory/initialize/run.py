"""`init`: one bounded model pass that proposes the first memories of a repository from its documents.

The repository is the folder given (default: the active workspace); its stamp is its realpath with a
linked git worktree mapped to its main working tree, like every stamp the agent writes. The model gets
the documents (sources.py) and the memories the workspace already sees, works with the memory tool on
a staging copy (reflect.run.model_pass) and the outcome becomes a proposal, reviewed and applied like a
reflection's. Nothing is written here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..proposals.model import Proposal
from ..reflect.config import ReflectConfig
from ..reflect.neighbours import BODY_CHARS, Neighbour
from ..reflect.propose import proposal_of
from ..reflect.run import Cancelled, Outcome, model_pass
from ..store.categories import PREFERENCE, PROJECT_FACT
from ..store.memory import Memory
from ..store.store import load_store
from ..store.workspace import canonical_workspace, is_inside, visibility
from .prompt import SYSTEM, user_message
from .sources import Sources, read_sources

MAX_MEMORIES = 40  # existing memories shown to the model at most (it can `view` the rest)
MEMORY_CHARS = 48 * 1024


class InitError(Exception):
    """The folder cannot be initialized (the message is a sentence for the user)."""


def repository(folder: str | os.PathLike[str]) -> tuple[Path, str]:
    """(the folder to read, the stamp): the folder's realpath, and that with a worktree → its main tree."""
    real = Path(os.path.realpath(os.path.expanduser(os.fspath(folder))))
    if not real.is_dir():
        raise InitError("it is not a folder")
    return real, canonical_workspace(real)


def known_memories(root: Path, stamp: str) -> list[Neighbour]:
    """The memories the workspace sees, this repository's own first, then preferences, then the rest
    (newest first within each), capped: so the model updates what exists instead of duplicating it."""
    store = load_store(root)
    seen = [m for m in store.memories() if m.category in (PROJECT_FACT, PREFERENCE) and not m.read_error
            and visibility(m.stamp, (stamp,)).visible]  # fmt: skip

    def rank(m: Memory) -> tuple[int, float]:
        return (0 if m.stamp == stamp else 1 if m.category == PREFERENCE else 2, -m.mtime)

    out: list[Neighbour] = []
    used = 0
    for m in sorted(seen, key=rank)[:MAX_MEMORIES]:
        body = m.body[:BODY_CHARS]
        if used + len(body) > MEMORY_CHARS:
            break
        used += len(body)
        out.append(Neighbour(m.vpath, m.category, m.stamp if isinstance(m.stamp, str) else None, body))
    return out


def initialize(
    root: Path,
    folder: str | os.PathLike[str],
    config: ReflectConfig,
    api_key: str,
    *,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Outcome, Sources, str]:
    """Run the pass (config already checked): (outcome, what was read, the repository's stamp).
    Raises InitError for a folder that is not one, Cancelled when cancelled."""
    repo, stamp = repository(folder)
    if is_inside(str(repo), Path(os.path.realpath(root))):
        raise InitError("it is the memory store itself, not a repository")
    is_cancelled = cancelled or (lambda: False)
    say = progress or (lambda message: None)
    say("reading the repository's documents")
    sources = read_sources(repo)
    if is_cancelled():
        raise Cancelled()
    memories = known_memories(root, stamp)
    outcome = Outcome("done", config=config)
    if not sources.documents:
        return outcome, sources, stamp  # nothing to learn from: no model request
    user = user_message(stamp, sources.documents, memories)
    model_pass(root, SYSTEM, user, config, api_key, stamp, outcome, cancelled=is_cancelled, progress=say)
    return outcome, sources, stamp


def init_proposal(root: Path, outcome: Outcome, sources: Sources, stamp: str) -> Proposal:
    """The pass as a proposal whose summary first lists what was read and what was cut."""
    proposal = proposal_of(root, outcome, stamp, source="init")
    if not sources.documents:
        return replace(proposal, summary=f"{sources.summary()} The model was not asked anything.")
    return replace(proposal, summary=f"{sources.summary()} {proposal.summary}", created=time.time())
