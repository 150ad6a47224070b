"""Recall over a store: keeps the index in step with the files and answers related/search queries.

Plain Python shared by the language server and the command line. The server hands it the memories it
has already parsed (so indexing never parses twice); the command line lets it stat the files and read
only what changed since the last run. What it answers is masked: titles and snippets show a secret's
kind, never the secret (findings/content.py detects them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..findings.content import mask_secrets
from ..store.freshness import key_at
from ..store.memory import Memory, load
from ..store.store import scan
from .duplicates import Duplicate, near_duplicates, rank_duplicates_first
from .index import Hit, IndexUnavailable, RecallIndex, SyncStats
from .query import words_near
from .records import RecallDoc, doc_from_memory
from .snippet import snippet
from .terms import content_text

if TYPE_CHECKING:  # the layer (numpy, the model) is imported only when it is on and something ranks
    import numpy as np

    from .semantic.layer import FillState, SemanticLayer

log = logging.getLogger("kin_memory.recall")
LEXICAL_POOL = 20  # lexical hits handed to the fusion: the floor has cut the weak ones already
DENSE_POOL = 20  # nearest memories by meaning handed to the fusion

T = TypeVar("T")
Progress = Callable[[int, int], None]  # (done, total)
Cancelled = Callable[[], bool]


@dataclass(frozen=True)
class Related:
    hit: Hit
    similarity: float  # word-shingle Jaccard with the hovered memory
    snippet: str

    @property
    def likely_duplicate(self) -> bool:
        from .duplicates import THRESHOLD

        return self.similarity >= THRESHOLD


class Recall:
    def __init__(
        self, root: str | os.PathLike[str], *, semantic: bool = False, background_fill: bool = False
    ) -> None:
        """semantic: rank with the semantic layer too (the `recall.semantic` setting); off, nothing of
        the layer is imported. background_fill: the owner fills the layer (the language server); else a
        ranking query embeds a few missing memories itself first (the command line, an agent)."""
        self.root = Path(root)
        self.index = RecallIndex(self.root)
        self.semantic_on = semantic
        self.background_fill = background_fill
        self._semantic: SemanticLayer | None = None
        # Why answers may miss memories: the last query could not read the index, or a change handed to
        # it was not written (the folder unwritable, the database locked): by memory ("" for a whole
        # sync), until that memory is written or a whole sync succeeds.
        self._read_failed: str | None = None
        self._unwritten: dict[str, str] = {}

    def unavailable(self) -> str | None:
        """Why an answer from the index may miss memories (its hidden folder refused, the database not
        opened, read or written); None when it answered and holds every change it was given. A search
        with a reason here is no "no match": every door says its answer is incomplete."""
        unwritten = list(self._unwritten.values())  # one step: the writer thread may change it meanwhile
        return self.index.refused or self._read_failed or (unwritten[0] if unwritten else None)

    @contextlib.contextmanager
    def _writing(self, vpath: str = "", cancelled: Cancelled | None = None) -> Iterator[None]:
        """Around a write to the index (of one memory, or "" for a whole sync): a failure is remembered
        (and raised on); a success forgets that memory's, and a whole sync not cancelled every one."""
        try:
            yield
        except (IndexUnavailable, sqlite3.Error, OSError) as exc:
            self._unwritten[vpath] = str(exc) or "the recall index could not be written"
            raise
        if not vpath and not (cancelled is not None and cancelled()):
            self._unwritten.clear()
        elif vpath:
            self._unwritten.pop(vpath, None)

    def warm(self) -> None:
        """Have the vocabulary snapshot current, so no query pays for reading it (writer thread)."""
        self.index.refresh_vocab()

    # -- keeping the index in step ---------------------------------------------------------------
    def sync_memories(
        self,
        memories: Iterable[Memory],
        *,
        progress: Progress | None = None,
        cancelled: Cancelled | None = None,
        chunk: int = 2000,
    ) -> SyncStats:
        """From memories already parsed: only those whose freshness key the index lacks are written."""
        by_vpath = {m.vpath: m for m in memories if not m.is_index}
        stats = {v: m.key for v, m in by_vpath.items()}

        def whole(vpath: str) -> RecallDoc | None:
            m = by_vpath[vpath]
            return doc_from_memory(load(m.path, vpath) if m.compact else m)

        with self._writing(cancelled=cancelled):
            return self.index.sync(stats, whole, progress=progress, cancelled=cancelled, chunk=chunk)

    def sync_disk(
        self, *, progress: Progress | None = None, cancelled: Cancelled | None = None, chunk: int = 2000
    ) -> SyncStats:
        """From the files: stat every memory, parse only the new and changed ones."""
        files, _ = scan(self.root)
        paths: dict[str, Path] = {}
        stats: dict[str, int] = {}
        for path, vpath, is_index in files:
            if is_index:
                continue
            key = key_at(path)
            if key is None:
                continue
            paths[vpath] = path
            stats[vpath] = key
        with self._writing(cancelled=cancelled):
            return self.index.sync(
                stats,
                lambda v: doc_from_memory(load(paths[v], v)),
                progress=progress,
                cancelled=cancelled,
                chunk=chunk,
            )

    def update(self, memory: Memory, *, overlay: bool = False) -> None:
        doc = doc_from_memory(memory, overlay=overlay)
        with self._writing(memory.vpath):
            if doc is None:
                self.index.remove([memory.vpath])
            else:
                self.index.upsert([doc])

    def remove(self, vpath: str) -> None:
        with self._writing(vpath):
            self.index.remove([vpath])

    def reindex(
        self,
        memories: Iterable[Memory] | None = None,
        *,
        progress: Progress | None = None,
        cancelled: Cancelled | None = None,
        chunk: int = 2000,
    ) -> SyncStats:
        self.index.clear()
        if memories is None:
            return self.sync_disk(progress=progress, cancelled=cancelled, chunk=chunk)
        return self.sync_memories(memories, progress=progress, cancelled=cancelled, chunk=chunk)

    # -- the semantic layer -----------------------------------------------------------------------
    def semantic(self) -> SemanticLayer | None:
        """The semantic layer when the setting has it on (made, not loaded: the model loads when
        something first embeds)."""
        if not self.semantic_on:
            return None
        if self._semantic is None:
            from .semantic.layer import SemanticLayer

            self._semantic = SemanticLayer(self.index.db)
        return self._semantic

    def semantic_state(self) -> FillState | None:
        """How far the layer is filled (None when it is off)."""
        layer = self.semantic()
        return None if layer is None else layer.state(count=not self.background_fill)

    def semantic_note(self) -> str | None:
        """What a ranking answered while the layer could not take part says (None when it did, or is off)."""
        layer = self.semantic()
        return None if layer is None else filling_note(layer.state(count=not self.background_fill))

    def _dense_ready(self, *, catch_up: bool = True) -> SemanticLayer | None:
        """The layer when it can rank now: on, its model usable and every memory embedded (with
        catch_up, a few missing vectors are embedded first: the command line and the agent's tool)."""
        layer = self.semantic()
        if layer is None:
            return None
        if self.background_fill:  # the server's fill counts and embeds; a query never does
            return layer if layer.complete else None
        try:
            state = layer.catch_up() if catch_up else layer.state()
        except (IndexUnavailable, sqlite3.Error) as exc:
            log.warning("semantic recall unavailable: %s", exc)
            return None
        return layer if state.ready else None

    def _fused(
        self,
        lexical: list[Hit],
        vector: np.ndarray,
        layer: SemanticLayer,
        active: tuple[str, ...] | None,
        limit: int,
        exclude: int | None = None,
        hover: bool = False,
    ) -> list[Hit]:
        """THE ranking of every door once the layer is on: the lexical hits and the memories nearest
        in meaning to `vector`, weighed by fusion.fuse."""
        from .fusion import HOVER_LEXICAL_WEIGHT, HOVER_MEANING_FLOOR, Lexical, fuse

        dense = layer.nearest(vector, active, DENSE_POOL, exclude)
        cosine = layer.vectors.cosines(vector, (h.doc_id for h in lexical))
        found = [Lexical(h.doc_id, h.score, h.coverage) for h in lexical]
        if hover:
            fused = fuse(
                found, dense, cosine, limit, floor=HOVER_MEANING_FLOOR, lexical_weight=HOVER_LEXICAL_WEIGHT
            )
        else:
            fused = fuse(found, dense, cosine, limit)
        by_id = {h.doc_id: h for h in lexical}
        by_id.update(self.index.queries.hits_by_id([f.key for f in fused if f.key not in by_id]))
        return [replace(by_id[f.key], score=f.score) for f in fused if f.key in by_id]

    def rank(
        self,
        query: str,
        active: tuple[str, ...] | None,
        limit: int = 5,
        *,
        prefix_last: bool = False,
    ) -> list[Hit]:
        """A query's memories, best first: lexical, fused with meaning when the layer is on and filled.
        Memories stamped with a folder inside an active repository count as that repository's."""
        active = with_subfolder_stamps(self.root, active)
        layer = self._dense_ready()
        if layer is None or self.index.queries.is_chat(query):
            return self.index.search(query, active, limit=limit, prefix_last=prefix_last)
        lexical = self.index.search(query, active, limit=max(limit, LEXICAL_POOL), prefix_last=prefix_last)
        vector = layer.embed_query(query)
        if vector is None:
            return lexical[:limit]
        return self._fused(lexical, vector, layer, active, limit)

    def related_text(self, text: str, active: tuple[str, ...] | None, limit: int = 5) -> list[Hit]:
        """Memories related to a long text (a transcript: reflection's neighbours), fused like a search;
        the model reads the text's first 256 tokens."""
        layer = self._dense_ready()
        if layer is None:
            return self.index.related(text, active, limit=limit)
        lexical = self.index.related(text, active, limit=max(limit, LEXICAL_POOL))
        vector = layer.embed(text)
        if vector is None:
            return lexical[:limit]
        return self._fused(lexical, vector, layer, active, limit)

    # -- queries ---------------------------------------------------------------------------------
    def related_to(
        self, memory: Memory, line: int, col: int, active: tuple[str, ...] | None, limit: int = 5
    ) -> list[Related]:
        """The memories related to the text under the pointer, likely duplicates of this memory first."""
        text = memory.lines[line] if 0 <= line < len(memory.lines) else ""
        paragraph = _paragraph(memory.lines, line, memory.body_line)
        query = words_near(paragraph, _offset_in(paragraph, text, col))
        body = memory.body
        hits = self._safe(lambda: self._related_hits(memory, query, active, limit))
        shown = content_text(query)
        return [
            Related(_masked_title(h), sim, snippet(h.body, shown))
            for h, sim in rank_duplicates_first(body, hits)
        ]

    def _related_hits(
        self, memory: Memory, query: str, active: tuple[str, ...] | None, limit: int
    ) -> list[Hit]:
        """A hover's ranking: the paragraph's words, fused with the memories nearest in meaning to the
        hovered memory's own stored vector (never embedded here: this is the keystroke path). A memory
        without a stored vector yet (just edited) is related by its words only."""
        text = query + "\n" + memory.title
        layer = self._dense_ready(catch_up=False)
        doc_id = None if layer is None else self.index.queries.doc_id(memory.vpath)
        vector = None if layer is None or doc_id is None else layer.vectors.vector_of(doc_id)
        if layer is None or vector is None:
            return self.index.related(text, active, limit=limit, exclude=memory.vpath)
        lexical = self.index.related(text, active, limit=max(limit, LEXICAL_POOL), exclude=memory.vpath)
        return self._fused(lexical, vector, layer, active, limit, exclude=doc_id, hover=True)

    def search(
        self,
        query: str,
        active: tuple[str, ...] | None,
        limit: int = 5,
        *,
        prefix_last: bool = False,
    ) -> list[tuple[Hit, str]]:
        hits = self._safe(lambda: self.rank(query, active, limit, prefix_last=prefix_last))
        shown = content_text(query)
        return [(_masked_title(h), snippet(h.body, shown)) for h in hits]

    def duplicates_of(self, memory: Memory, active: tuple[str, ...] | None) -> list[Duplicate]:
        if memory.is_index or memory.read_error or memory.category == "session":
            return []
        return self._safe(lambda: near_duplicates(self.index, memory.vpath, memory.body, active))

    def neighbour_bodies(
        self, memory: Memory, active: tuple[str, ...] | None, limit: int = 8
    ) -> list[tuple[str, str]]:
        """(vpath, body) of the visible memories sharing this one's rarest words: the ones about the same
        subject, for the contradiction check (KM604)."""
        if memory.is_index or memory.read_error or memory.category == "session":
            return []
        hits = self._safe(
            lambda: self.index.related(memory.body, active, limit=limit, exclude=memory.vpath, rescore=False)
        )
        return [(h.vpath, h.body) for h in hits]

    def _safe(self, fn: Callable[[], list[T]]) -> list[T]:
        """Recall is best effort: an index that cannot be opened or read (locked by another process)
        answers nothing, with a log line, and says why in unavailable()."""
        try:
            found = fn()
        except (IndexUnavailable, sqlite3.OperationalError) as exc:
            log.warning("recall unavailable: %s", exc)
            self._read_failed = str(exc) or "the recall index could not be read"
            return []
        self._read_failed = None
        return found


def filling_note(state: FillState) -> str | None:
    """What a ranking says while the semantic layer cannot take part (None when it can)."""
    if state.problem is not None:
        return f"semantic recall is off: {state.problem}; these results matched words only"
    if state.missing < 0:
        return "the semantic layer is still filling: these results matched words only"
    if state.missing:
        done = state.total - state.missing
        return (
            f"the semantic layer is still filling ({done} of {state.total} memories): "
            "these results matched words only"
        )
    return None


def incomplete(reason: str) -> str:
    """What a search answered without a usable index says (the command line and the agent's tool)."""
    return f"the recall index cannot be used ({reason}): this search could not look at every memory"


def sync_quietly(recall: Recall) -> bool:
    """Bring the index up to date with the disk when it can be, and say whether it was: when it cannot
    (unwritable, locked), recall.unavailable() says why and the answers that follow are marked incomplete."""
    try:
        recall.sync_disk()
    except (IndexUnavailable, sqlite3.Error, OSError) as exc:
        log.warning("recall index not brought up to date: %s", exc)
        return False
    return recall.unavailable() is None


def _masked_title(hit: Hit) -> Hit:
    """Answers show titles: a secret in a heading is masked like one in a snippet (the body stays whole
    for the callers that compare texts)."""
    title = mask_secrets(hit.title)
    return hit if title == hit.title else replace(hit, title=title)


def _paragraph(lines: tuple[str, ...], line: int, first: int = 0) -> str:
    """The paragraph around line (at most 20 lines each way), never above `first`: the body's first
    line, so a paragraph right under the frontmatter never takes its keys into the query."""
    if not first <= line < len(lines):
        return ""
    start = line
    while start > first and lines[start - 1].strip() and line - start < 20:
        start -= 1
    end = line
    while end + 1 < len(lines) and lines[end + 1].strip() and end - line < 20:
        end += 1
    return "\n".join(lines[start : end + 1])


def _offset_in(paragraph: str, line_text: str, col: int) -> int:
    at = paragraph.find(line_text)
    return max(0, at) + max(0, col)


def with_subfolder_stamps(root: Path, active: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """`active` and the stamps the index holds that name a folder inside one of its repositories or one
    of their linked worktrees (what the doors stamped before every door stamped a repository's main top
    level): visible from that repository (store.workspace.visibility), so search finds them too."""
    if not active:
        return active
    from ..store.workspace import GLOBAL, linked_worktrees, repository_of_stamp
    from .peek import scopes_below

    def stamps_of(ws: str) -> list[str]:
        trees = linked_worktrees(ws) if ws.startswith("/") else []
        return [*scopes_below(root, ws), *trees, *(s for wt in trees for s in scopes_below(root, wt))]

    more = [s for ws in active if ws != GLOBAL for s in stamps_of(ws) if repository_of_stamp(s, active)]
    return (*active, *dict.fromkeys(s for s in more if s not in active)) if more else active
