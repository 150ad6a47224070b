"""The labeled set: memories, user turns and hover cases, read from data/ and written out as a store.

A memory's id is its path in the store without `.md` (`ledger/pgbouncer` → `ledger/pgbouncer.md`), so a
result of any system maps back to its labels by path alone.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DATA_DIR = Path(__file__).resolve().parent / "data"
GLOBAL = "global"
CATEGORIES = ("project-fact", "preference", "episodic", "session")
KINDS = (
    "keyword",
    "filler",
    "paraphrase",
    "shorthand",
    "typo",
    "variant",
    "trap",
    "preference",
    "session",
    "no-answer",
    "hover",
)
NO_ANSWER = "no-answer"
# Turn files by slice. The paraphrase slice was written before recall had a semantic layer; the held-out
# slice is for one final look only, so a plain `load()` leaves it out and nothing tunes on it by accident.
TURN_FILES = {"main": "turns.yaml", "paraphrase": "paraphrase.yaml", "heldout": "heldout.yaml"}
SLICES = tuple(TURN_FILES)
TUNING_SLICES = ("main", "paraphrase")
# Typical ages when an entry does not say: preferences are recency-weighted by kin-memory, so their
# mtime matters; session notes are hours old by nature.
DEFAULT_AGE_DAYS = {"project-fact": 60.0, "preference": 60.0, "episodic": 14.0, "session": 0.2}


@dataclass(frozen=True)
class LabeledMemory:
    id: str
    category: str | None  # None: the file has no frontmatter (a legacy file, read as project-fact)
    workspace: str | None  # None: no `workspace` key (legacy, visible everywhere)
    title: str
    body: str
    age_days: float
    extra: tuple[tuple[str, str], ...] = ()  # further frontmatter keys, kept as written

    @property
    def effective_category(self) -> str:
        return self.category or "project-fact"

    @property
    def indexed(self) -> bool:
        """Session memories are never indexed, so no system may ever return one."""
        return self.effective_category != "session"

    def visible_in(self, workspace: str) -> bool:
        return self.workspace in (None, GLOBAL, workspace)

    @property
    def rel_path(self) -> str:
        return f"{self.id}.md"

    @property
    def content(self) -> str:
        """Title and body: the text the baselines rank."""
        return f"{self.title}\n{self.body}"

    def render(self) -> str:
        """The memory file as an agent would have written it."""
        parts = []
        if self.category is not None:
            fm = [f"category: {self.category}"]
            if self.workspace is not None:
                fm.append(f"workspace: {self.workspace}")
            fm += [f"{k}: {v}" for k, v in self.extra]
            parts.append("---\n" + "\n".join(fm) + "\n---\n")
        parts.append(f"# {self.title}\n\n{self.body.rstrip()}\n")
        return "".join(parts)


@dataclass(frozen=True)
class Case:
    """One query with its labels: a user turn, or a hover over a paragraph of a memory."""

    id: str
    workspace: str
    query: str  # the turn's text; for a hover, the paragraph under the pointer
    kinds: tuple[str, ...]
    relevant: dict[str, int]  # memory id → 2 (the answer) or 1 (related)
    traps: tuple[str, ...] = ()  # memories of other workspaces that look like the answer: never results
    memory: str | None = None  # hover: the hovered memory (never a result of its own hover)
    line: int = 0  # hover: pointer position in the memory file (0-based line, column)
    col: int = 0
    slice: str = "main"  # which turn file it comes from (SLICES); hover cases are "main"

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


@dataclass(frozen=True)
class LabeledSet:
    memories: dict[str, LabeledMemory]
    turns: list[Case]
    hover: list[Case]

    def recallable(self, workspace: str | None, exclude: str | None = None) -> list[LabeledMemory]:
        """What a perfect recall may return in workspace: visible and indexed (not session). None is
        the operator's view: every indexed memory."""
        return [
            m
            for m in self.memories.values()
            if m.indexed and (workspace is None or m.visible_in(workspace)) and m.id != exclude
        ]


def _read_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _memory(entry: dict[str, Any], default_workspace: str | None) -> LabeledMemory:
    has_frontmatter = entry.get("frontmatter", True)
    category = entry.get("category") if has_frontmatter else None
    if has_frontmatter and category is None:
        raise ValueError(f"{entry.get('id')}: a memory with frontmatter needs a category")
    workspace = entry.get("workspace", default_workspace) if has_frontmatter else None
    age = entry.get("age_days", DEFAULT_AGE_DAYS[category or "project-fact"])
    extra = tuple((str(k), str(v)) for k, v in (entry.get("extra") or {}).items())
    return LabeledMemory(
        id=entry["id"],
        category=category,
        workspace=workspace,
        title=entry["title"],
        body=entry["body"],
        age_days=float(age),
        extra=extra,
    )


def load_memories(data_dir: Path = DATA_DIR) -> list[LabeledMemory]:
    """All memories, in file order; duplicate ids are kept so that a check can report them."""
    out: list[LabeledMemory] = []
    for path in sorted((data_dir / "memories").glob("*.yaml")):
        doc = _read_yaml(path)
        out += [_memory(e, doc.get("workspace")) for e in doc["memories"]]
    return out


def hover_position(memory: LabeledMemory, anchor: str) -> tuple[int, int, str]:
    """(line, column, paragraph) of the pointer resting at the start of anchor in the rendered file.

    The paragraph is the run of non-blank lines around that line: what a hover asks about."""
    lines = memory.render().split("\n")
    start = _body_start(lines)
    hits = [(i, line.find(anchor)) for i, line in enumerate(lines) if i >= start and anchor in line]
    if len(hits) != 1:
        raise ValueError(f"{memory.id}: anchor {anchor!r} found {len(hits)} times in the body")
    line, col = hits[0]
    first, last = line, line
    while first > start and lines[first - 1].strip():
        first -= 1
    while last + 1 < len(lines) and lines[last + 1].strip():
        last += 1
    return line, col, "\n".join(lines[first : last + 1])


def _body_start(lines: list[str]) -> int:
    if lines and lines[0] == "---":
        return lines.index("---", 1) + 1
    return 0


def _case(entry: dict[str, Any], slice_: str) -> Case:
    return Case(
        id=entry["id"],
        workspace=entry["workspace"],
        query=entry["text"],
        kinds=tuple(entry.get("kinds") or ()),
        relevant={str(k): int(v) for k, v in (entry.get("relevant") or {}).items()},
        traps=tuple(entry.get("traps") or ()),
        slice=slice_,
    )


def _hover_case(entry: dict[str, Any], memories: dict[str, LabeledMemory]) -> Case:
    memory = memories[entry["memory"]]
    workspace = entry.get("workspace") or memory.workspace
    if workspace in (None, GLOBAL):
        raise ValueError(f"{entry['id']}: hovering a global memory needs an explicit workspace")
    line, col, paragraph = hover_position(memory, entry["anchor"])
    return Case(
        id=entry["id"],
        workspace=workspace,
        query=paragraph,
        kinds=("hover", *(entry.get("kinds") or ())),
        relevant={str(k): int(v) for k, v in (entry.get("relevant") or {}).items()},
        memory=memory.id,
        line=line,
        col=col,
    )


def load(data_dir: Path = DATA_DIR, slices: tuple[str, ...] = TUNING_SLICES) -> LabeledSet:
    """The memories, hover cases and the turns of the given slices (never "heldout" unless asked)."""
    unknown = set(slices) - set(SLICES)
    if unknown:
        raise ValueError(f"unknown slices {sorted(unknown)}; known: {', '.join(SLICES)}")
    memories = {m.id: m for m in load_memories(data_dir)}
    turns = [_case(e, name) for name in slices for e in _read_yaml(data_dir / TURN_FILES[name])["turns"]]
    hover = [_hover_case(e, memories) for e in _read_yaml(data_dir / "hover.yaml")["hover"]]
    return LabeledSet(memories, turns, hover)


def materialize(labeled: LabeledSet, root: Path, now: float | None = None) -> None:
    """Write every memory as a file under root, its mtime set to its age (lifecycle and the
    preference recency weighting read the mtime)."""
    now = time.time() if now is None else now
    for memory in labeled.memories.values():
        path = root / memory.rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory.render(), encoding="utf-8")
        stamp = now - memory.age_days * 86400.0
        os.utime(path, (stamp, stamp))
