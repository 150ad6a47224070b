"""The systems compared: kin-memory's recall, a plain BM25 library, and a count of query words.

Each answers a Case with memory ids, best first. The baselines rank exactly the memories a case may see
(visible in its workspace, not session, never the hovered memory itself), so any workspace leak in the
results can only come from kin-memory's own filter.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Protocol

from .dataset import Case, LabeledMemory, LabeledSet
from .metrics import K

_WORD = re.compile(r"[^\W_]+")  # letters and digits: snake_case names split into words


class System(Protocol):
    name: str

    def search(self, case: Case) -> list[str]: ...

    def hover(self, case: Case) -> list[str]: ...


def id_of_vpath(vpath: str) -> str:
    """`/memories/ledger/pgbouncer.md` → `ledger/pgbouncer` (an unknown path stays recognisable)."""
    rel = vpath.removeprefix("/memories/")
    return rel.removesuffix(".md")


class KinMemory:
    """The product's recall over the materialized store, exactly as the agent and the editor call it."""

    name = "kin-memory"

    def __init__(self, root: Path, semantic: bool = True) -> None:
        from kin_memory.recall.service import Recall

        self.root = root
        self.recall = Recall(root, semantic=semantic)
        self.recall.sync_disk()
        layer = self.recall.semantic()
        if layer is not None:  # every memory embedded first, as the server's background fill leaves it
            layer.fill()
            if layer.problem is not None:
                raise RuntimeError(f"the semantic layer cannot run: {layer.problem}")

    def search(self, case: Case) -> list[str]:
        hits = self.recall.search(case.query, (case.workspace,), K)
        return [id_of_vpath(hit.vpath) for hit, _snippet in hits]

    def hover(self, case: Case) -> list[str]:
        from kin_memory.store.memory import load
        from kin_memory.store.paths import virtual_of_rel

        assert case.memory is not None
        rel = f"{case.memory}.md"
        memory = load(self.root / rel, virtual_of_rel(rel))
        related = self.recall.related_to(memory, case.line, case.col, (case.workspace,), K)
        return [id_of_vpath(r.hit.vpath) for r in related]

    def close(self) -> None:
        self.recall.index.close()


class Bm25s:
    """The `bm25s` package with its defaults and English stop words, over title + body of the memories
    the case may see. A memory sharing no query term (score 0) is not a result."""

    name = "bm25s"

    def __init__(self, labeled: LabeledSet) -> None:
        import bm25s

        self._bm25s = bm25s
        self.labeled = labeled
        self._indexes: dict[tuple[str | None, str | None], tuple[Any, list[LabeledMemory]]] = {}

    def _index(self, workspace: str | None, exclude: str | None) -> tuple[Any, list[LabeledMemory]]:
        key = (workspace, exclude)
        if key not in self._indexes:
            docs = self.labeled.recallable(workspace, exclude)
            tokens = self._bm25s.tokenize([d.content for d in docs], stopwords="en", show_progress=False)
            retriever = self._bm25s.BM25()
            retriever.index(tokens, show_progress=False)
            self._indexes[key] = (retriever, docs)
        return self._indexes[key]

    def _rank(self, query: str, workspace: str | None, exclude: str | None = None) -> list[str]:
        retriever, docs = self._index(workspace, exclude)
        # Plain token lists: the retriever maps them through its own vocabulary and ignores unknown words.
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)
        found, scores = retriever.retrieve(tokens, k=min(K, len(docs)), show_progress=False)
        return [docs[int(i)].id for i, s in zip(found[0], scores[0], strict=True) if s > 0]

    def search(self, case: Case) -> list[str]:
        return self._rank(case.query, case.workspace)

    def hover(self, case: Case) -> list[str]:
        return self._rank(case.query, case.workspace, case.memory)

    def unfiltered(self, case: Case) -> list[str]:
        """The same ranking over every workspace's memories: shows whether a case's traps would bite."""
        return self._rank(case.query, None)


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class WordCount:
    """The floor: rank by how many distinct query words a memory contains (ties keep set order)."""

    name = "word count"

    def __init__(self, labeled: LabeledSet) -> None:
        self.labeled = labeled
        self._words = {m.id: words(m.content) for m in labeled.memories.values()}

    def _rank(self, query: str, workspace: str, exclude: str | None = None) -> list[str]:
        wanted = words(query)
        counted = [
            (len(wanted & self._words[m.id]), m.id) for m in self.labeled.recallable(workspace, exclude)
        ]
        ranked = sorted((c for c in counted if c[0] > 0), key=lambda c: -c[0])
        return [mid for _count, mid in ranked[:K]]

    def search(self, case: Case) -> list[str]:
        return self._rank(case.query, case.workspace)

    def hover(self, case: Case) -> list[str]:
        return self._rank(case.query, case.workspace, case.memory)
