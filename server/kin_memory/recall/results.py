"""Recall answers as protocol results: the language server and the CLI's `--json` print the same thing."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..findings.content import mask_secrets
from ..protocol import IndexPreviewResult, SearchHit, SearchResult
from ..store.prompt_block import PromptBlock
from .index import Hit


def search_result(
    hits: Sequence[tuple[Hit, str]], uri_of: Callable[[str], str], complete: bool = True, hidden: int = 0
) -> SearchResult:
    return SearchResult(
        complete=complete,
        hidden=hidden,
        results=[
            SearchHit(path=h.vpath, uri=uri_of(h.vpath), category=h.category, workspace=h.workspace,
                      title=h.title, snippet=snip, score=float(f"{h.score:.6g}"))
            for h, snip in hits
        ]
    )  # fmt: skip


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
        cut=len(block.lines) - block.kept,
        cut_reason=reason,  # type: ignore[arg-type]  # narrowed to the literal above
        hidden=block.hidden,
    )


def cut_sentence(result: IndexPreviewResult) -> str:
    """What the cap cut, as a sentence (empty when nothing was)."""
    if not result.truncated:
        return ""
    cap = "200-line" if result.cut_reason == "lines" else "25 KB"
    return f"{result.cut} lines past the {cap} cap are not inlined"
