"""`consolidate` with a model: the candidate groups (candidates.py) given to one bounded pass.

At most MAX_GROUPS groups go to the model per pass (the largest first, so a big duplicate cluster is
not left for later); the rest are listed in the summary as not processed. The model works with the
memory tool on a staging copy (reflect.run.model_pass) and the outcome becomes one proposal: merges,
corrected values, retirements, promotions. Its summary explains each change in one line that cites the
memories the change is based on: its group's memories (given in full) and those the model viewed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..proposals.model import Proposal
from ..reflect.config import ReflectConfig
from ..reflect.propose import proposal_of
from ..reflect.providers.base import ToolCall
from ..reflect.run import Outcome, model_pass
from ..sinks.prompt import field as one_line
from ..store.memory import Memory
from .candidates import KIND_ORDER, Candidate
from .prompt import SYSTEM, Shown, user_message

MAX_GROUPS = 8
TEXT_CHARS = 6000  # of one memory shown to the model (it can `view` the whole)


@dataclass
class Pass:
    outcome: Outcome
    processed: list[Candidate]
    left: list[Candidate]
    viewed: set[str] = field(default_factory=set)


def pick(groups: list[Candidate], limit: int = MAX_GROUPS) -> tuple[list[Candidate], list[Candidate]]:
    """The largest `limit` groups (contradictions before duplicates at equal size), and the rest."""
    ordered = sorted(groups, key=lambda c: (-len(c.paths), KIND_ORDER[c.kind], c.paths))
    return ordered[:limit], ordered[limit:]


def shown(memory: Memory, now: float) -> Shown:
    stamp = memory.stamp if isinstance(memory.stamp, str) else None
    return Shown(
        memory.vpath, memory.category, stamp, int((now - memory.mtime) // 86400), memory.text[:TEXT_CHARS]
    )


def consolidate(
    root: Path,
    workspace: str | None,
    groups: list[Candidate],
    memories: dict[str, Memory],
    config: ReflectConfig,
    api_key: str,
    *,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[str], None] | None = None,
    limit: int = MAX_GROUPS,
) -> Pass:
    """Run the pass over the candidate groups (config already checked); raises Cancelled."""
    processed, left = pick(groups, limit)
    result = Pass(Outcome("done", config=config), processed, left)
    if not processed:
        return result
    now = time.time()
    texts = {p: shown(memories[p], now) for g in processed for p in g.paths if p in memories}

    def on_call(call: ToolCall) -> None:
        if call.input and call.input.get("command") == "view" and isinstance(call.input.get("path"), str):
            result.viewed.add(str(call.input["path"]))

    model_pass(root, SYSTEM, user_message(processed, texts, workspace), config, api_key, workspace, result.outcome,
               cancelled=cancelled or (lambda: False), progress=progress or (lambda m: None), on_call=on_call)  # fmt: skip
    return result


def consolidation_proposal(root: Path, workspace: str | None, done: Pass) -> Proposal:
    """One proposal; its summary: the groups processed and left, one line per change, the pass's end."""
    proposal = proposal_of(root, done.outcome, workspace, source="consolidate")
    if not done.processed:
        return replace(
            proposal, summary="There are no consolidation candidates; the model was not asked anything."
        )
    head = [
        f"{len(done.processed)} candidate group{'s' if len(done.processed) != 1 else ''} given to the model."
    ]
    if done.left:
        names = "; ".join(f"{c.kind}: {', '.join(one_line(p) for p in c.paths)}" for c in done.left)
        head.append(f"Not processed in this pass ({len(done.left)}): {names}.")
    lines = [_explain(c.kind, c.new_path or c.path, c.path, done) for c in proposal.changes]
    summary = " ".join(head) + " " + proposal.summary + "".join(f"\n- {line}" for line in lines)
    return replace(proposal, summary=summary)


def _explain(kind: str, shown_path: str, path: str, done: Pass) -> str:
    verbs = {"create": "creates", "edit": "edits", "delete": "deletes", "rename": "renames"}
    group = next((g for g in done.processed if path in g.paths), None)
    read = sorted(set(group.paths if group else ()) | done.viewed)
    why = f" ({group.kind}: {one_line(group.reason)})" if group else ""
    cites = f"; read {', '.join(one_line(p) for p in read)}" if read else ""
    return f"{verbs.get(kind, kind)} {one_line(shown_path)}{why}{cites}"
