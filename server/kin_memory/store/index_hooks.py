"""What the memory tool asks of the recall index, which sits beside the tool (not below it): the stamps it
already holds (a folder view's workspace filter), the memories whose text holds a path's words (a
rename's references) and a signature of its files (when a process may keep what it read). The package
root installs the recall index's answers once (`kin_memory/__init__.py`), as it installs history's write
hook; with nothing installed every answer is "no index", and the tool reads the files themselves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

StampRows = dict[str, tuple[int, str | None, str | None]]  # vpath → (freshness key, workspace, scope)
Mentions = tuple[set[str], dict[str, tuple[int, int, str]]]  # (phrase hits, vpath → (key, size, category))

_answers: dict[str, Callable[..., Any]] = {}


def install(
    stamps: Callable[[Path | str, str], StampRows | None],
    mentions: Callable[[Path | str, str], Mentions | None],
    signature: Callable[[Path | str], object],
) -> None:
    _answers.update(stamps=stamps, mentions=mentions, signature=signature)


def stamps_below(root: Path | str, vprefix: str) -> StampRows | None:
    fn = _answers.get("stamps")
    return fn(root, vprefix) if fn else None


def mentioning(root: Path | str, text: str) -> Mentions | None:
    fn = _answers.get("mentions")
    return fn(root, text) if fn else None


def signature(root: Path | str) -> object:
    """What says the index's rows may have changed; None when there is no index (nothing to keep)."""
    fn = _answers.get("signature")
    return fn(root) if fn else None
