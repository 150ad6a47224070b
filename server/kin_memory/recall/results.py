"""Recall answers as protocol results: the language server and the CLI's `--json` print the same thing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from ..findings.content import mask_secrets
from ..protocol import IndexPreviewResult, SearchHit, SearchParams, SearchResult
from ..store.context import Context
from ..store.prompt_block import PromptBlock
from .filters import OVERFETCH, HitFilter, hidden_count, narrowed, parse_query
from .index import Hit

if TYPE_CHECKING:
    from .service import Recall

MAX_SEARCH_RESULTS = 100


def search_result(
    hits: Sequence[tuple[Hit, str]],
    uri_of: Callable[[str], str],
    complete: bool = True,
    hidden: int = 0,
    note: str | None = None,
) -> SearchResult:
    return SearchResult(
        complete=complete,
        hidden=hidden,
        note=note,
        results=[
            SearchHit(path=h.vpath, uri=uri_of(h.vpath), category=h.category, workspace=h.workspace,
                      title=h.title, snippet=snip, score=float(f"{h.score:.6g}"))
            for h, snip in hits
        ]
    )  # fmt: skip


def search_hits(
    recall: Recall,
    params: SearchParams,
    view: tuple[str, ...],
    ctx: Context,
    querying: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> list[tuple[Hit, str]]:
    """`kin.memory.search`'s hits in one view (typed `category:`/`status:`/`age:` words and the params'
    filters applied)."""
    limit = min(params.limit, MAX_SEARCH_RESULTS)
    query, f = parse_query(params.query, HitFilter(params.category, params.status, params.max_age_days))
    with querying():
        found = recall.search(query, view, limit * OVERFETCH if f.active else limit)
    return narrowed(found, f, ctx.now, ctx.thresholds, limit) if f.active else found


def answer_search(
    recall: Recall,
    params: SearchParams,
    active: tuple[str, ...],
    ctx: Context,
    uri_of: Callable[[str], str],
    complete: bool,
    note: str | None = None,
) -> SearchResult:
    """`kin.memory.search`: the hits in the active view, and how many more the operator's view holds (the
    start-up front answers through this; the language server runs the two views side by side)."""
    hits = search_hits(recall, params, active, ctx)
    # "n more in other workspaces": the same search in the operator's view (none when that is this one)
    everywhere = search_hits(recall, params, (), ctx) if active else hits
    return search_answer(hits, everywhere, uri_of, complete, note)


def search_answer(
    hits: list[tuple[Hit, str]], everywhere: list[tuple[Hit, str]], uri_of: Callable[[str], str],
    complete: bool, note: str | None = None,
) -> SearchResult:  # fmt: skip
    return search_result(hits, uri_of, complete=complete, hidden=hidden_count(hits, everywhere), note=note)


def index_preview_result(block: PromptBlock) -> IndexPreviewResult:
    """The block as the agent would get it, with secrets masked in what is shown: `lines` and `bytes`
    still count the block itself (what the caps are measured on), so they match KM500/KM501."""
    text = block.text
    reason = block.cut_reason if block.truncated and block.cut_reason in ("lines", "bytes") else None
    return IndexPreviewResult(
        text=mask_secrets(text),
        lines=block.kept,
        bytes=len(text.encode("utf-8", "surrogatepass")),
        truncated=block.truncated,
        cut=block.count - block.kept,
        cut_reason=reason,  # type: ignore[arg-type]  # narrowed to the literal above
        hidden=block.hidden,
    )


def cut_sentence(result: IndexPreviewResult) -> str:
    """What the cap cut, as a sentence (empty when nothing was)."""
    if not result.truncated:
        return ""
    cap = "200-line" if result.cut_reason == "lines" else "25 KB"
    return f"{result.cut} lines past the {cap} cap are not inlined"
