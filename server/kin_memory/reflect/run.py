"""One bounded reflection pass: the model reads a transcript with the memory tool in hand, against staging.

Functional core shared by the language server and the command line. Nothing here writes to the store: the
tool calls run in a staging overlay (staging.py) and the outcome carries the change list for review.
Bounds: at most `max_tool_calls` tool calls and `timeout` seconds overall; at either bound the pass stops
and what it staged is offered for review. A model error (HTTP 4xx/5xx, rate limit, connection) ends the
pass with nothing offered. Cancellation is checked between requests and between tool calls.

There is no automatic reflection in this product: `memory_reflect = false` / `KIN_MEMORY_REFLECT=0` would
only disable such an automatic pass, so they do not affect the explicit command. `memory_enabled = false`
refuses it (the caller checks, see `disabled_message`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..store.memory import load
from ..store.paths import virtual_of_rel
from ..store.workspace import visibility
from ..wording import counted
from .changes import Change, summary_of
from .config import ReflectConfig
from .neighbours import Neighbour, neighbours
from .prompt import SYSTEM, user_message
from .providers.base import Conversation, ModelError, ModelTimeout, ToolCall, Turn, short
from .providers.factory import open_conversation
from .staging import Staging
from .transcript import Transcript

CANCEL_POLL = 0.1  # seconds between looks at the cancel flag while a request is in flight

STOP_TEXT = {
    "done": "The model finished",
    "tool-limit": "The pass stopped at the tool-call limit ({limit})",
    "time-limit": "The pass stopped at the time limit ({timeout:g} s)",
    "cancelled": "The pass was cancelled",
    "error": "The model endpoint failed",
}


class Cancelled(Exception):
    """The user cancelled the pass; nothing was applied."""


@dataclass
class Outcome:
    stopped: str  # done | tool-limit | time-limit | error
    changes: list[Change] = field(default_factory=list)
    tool_calls: int = 0
    refused: list[str] = field(default_factory=list)  # why tool calls failed (as the model was told)
    model_text: str = ""
    error: str | None = None
    neighbours: list[Neighbour] = field(default_factory=list)
    config: ReflectConfig | None = None
    skipped_records: int = 0  # transcript records that were not conversation
    transcript_cuts: str = ""  # what reading the transcript left out or shortened, as a sentence
    unread: list[tuple[str, str]] = field(default_factory=list)  # (store-relative file, why) not read

    @property
    def reviewable(self) -> bool:
        """Whether the staged changes may be offered for applying (not after a model error)."""
        return self.stopped != "error" and bool(self.changes)

    @property
    def summary(self) -> str:
        """Sentences: how the pass ended, what it proposes, what it skipped, and the model's last words."""
        c = self.config or ReflectConfig()
        calls = f"{self.tool_calls} tool call{'s' if self.tool_calls != 1 else ''}"
        head = STOP_TEXT[self.stopped].format(limit=c.max_tool_calls, timeout=c.timeout)
        error = (self.error or "").rstrip(".")
        sentences = [f"{error[:1].upper()}{error[1:]}." if error else f"{head} after {calls}."]
        if self.refused:
            sentences.append(f"The memory tool refused {len(self.refused)} of them.")
        if self.stopped == "error":
            discarded = f" (discarded: {summary_of(self.changes)})" if self.changes else ""
            sentences.append(f"Nothing was proposed{discarded}.")
        elif self.changes:
            sentences.append(f"Proposed: {summary_of(self.changes)}.")
        else:
            sentences.append("There is nothing to write.")
        if self.skipped_records:
            n = self.skipped_records
            sentences.append(
                f"{n} transcript record{'s were' if n != 1 else ' was'} skipped (not conversation)."
            )
        if self.transcript_cuts:
            sentences.append(self.transcript_cuts)
        if self.unread:
            listed = ", ".join(f"{virtual_of_rel(rel)} ({why})" for rel, why in self.unread)
            sentences.append(
                f"Files the pass did not read, so neither showed the model nor proposed: {listed}."
            )
        if self.model_text:
            sentences.append(f"The model said: “{short(self.model_text)}”")
        return " ".join(sentences)


def _visible_to(active: tuple[str, ...] | None) -> Callable[[str, Path], bool] | None:
    """The staging filter: memory files another workspace owns are not staged (None: the operator's view)."""
    if not active:
        return None

    def visible(rel: str, path: Path) -> bool:
        if not rel.endswith(".md"):
            return True
        memory = load(path, virtual_of_rel(rel))
        return visibility(memory.stamp, active).visible

    return visible


def _send(conversation: Conversation, timeout: float, is_cancelled: Callable[[], bool]) -> Turn:
    """One model request that a cancel ends at once, not at its timeout: the request runs in its own
    thread, and on cancel the pass stops waiting (and closes the client, which ends the request as soon
    as the HTTP stack notices); whatever answer comes later is dropped."""
    outcome: list[Turn | BaseException] = []
    done = threading.Event()

    def request() -> None:
        try:
            outcome.append(conversation.send(timeout=timeout))
        except BaseException as exc:  # noqa: BLE001 - handed back to the pass's thread as is
            outcome.append(exc)
        finally:
            done.set()

    threading.Thread(target=request, name="kin-memory-model-request", daemon=True).start()
    while not done.wait(CANCEL_POLL):
        if is_cancelled():
            conversation.abort()
            raise Cancelled()
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def _execute(call: ToolCall, staging_root: Path, workspace: str | None) -> tuple[str, bool]:
    if call.input is None:
        return call.problem or "the tool call could not be understood", True
    from ..tool.commands import ToolContext, run_tool

    result = run_tool(call.input, ToolContext(root=staging_root, workspace=workspace, mode="auto"))
    return result.content, result.is_error


def reflect(
    root: Path,
    transcript: Transcript,
    config: ReflectConfig,
    api_key: str,
    workspace: str | None,
    *,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[str], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Outcome:
    """Run one pass (config already checked). Raises Cancelled; every other failure is in the Outcome."""
    is_cancelled = cancelled or (lambda: False)
    say = progress or (lambda message: None)
    active = (workspace,) if workspace else None
    say("finding related memories")
    near = neighbours(root, transcript.text, active)
    if is_cancelled():
        raise Cancelled()
    outcome = Outcome(
        "done",
        neighbours=near,
        config=config,
        skipped_records=transcript.skipped,
        transcript_cuts=transcript.cuts.sentence(),
    )
    user = user_message(transcript.text, near, workspace)
    return model_pass(root, SYSTEM, user, config, api_key, workspace, outcome,
                      cancelled=is_cancelled, progress=say, clock=clock)  # fmt: skip


def model_pass(
    root: Path,
    system: str,
    user: str,
    config: ReflectConfig,
    api_key: str,
    workspace: str | None,
    outcome: Outcome,
    *,
    cancelled: Callable[[], bool],
    progress: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    on_call: Callable[[ToolCall], None] | None = None,
) -> Outcome:
    """The bounded tool loop every model pass shares (reflection, init, consolidation): the model gets
    `system` and `user`, its memory-tool calls run against a staging copy of the memories `workspace`
    sees, and the staged changes land in `outcome`. Raises Cancelled."""
    deadline = clock() + config.timeout
    is_cancelled, say = cancelled, progress

    def check_cancel() -> None:
        if is_cancelled():
            raise Cancelled()

    active = (workspace,) if workspace else None
    with Staging(root, visible=_visible_to(active)) as staging:
        try:
            conversation = open_conversation(
                config.provider or "",
                model=config.model or "",
                base_url=config.base_url,
                api_key=api_key,
                system=system,
                user=user,
            )
            while True:
                check_cancel()
                remaining = deadline - clock()
                if remaining <= 0:
                    outcome.stopped = "time-limit"
                    break
                say(f"asking the model ({counted(outcome.tool_calls, 'tool call')} so far)")
                turn = _send(conversation, remaining, is_cancelled)
                if turn.text:
                    outcome.model_text = turn.text
                if not turn.calls:
                    break
                results: list[tuple[ToolCall, str, bool]] = []
                for call in turn.calls:
                    check_cancel()
                    if outcome.tool_calls >= config.max_tool_calls:
                        break
                    if on_call is not None:
                        on_call(call)
                    text, is_error = _execute(call, staging.dir, workspace)
                    outcome.tool_calls += 1
                    if is_error:
                        outcome.refused.append(text)
                    results.append((call, text, is_error))
                    say(
                        f"tool call {outcome.tool_calls}: {call.input.get('command') if call.input else 'invalid'}"
                    )
                if outcome.tool_calls >= config.max_tool_calls:
                    outcome.stopped = "tool-limit"
                    break
                conversation.answer(results)
        except ModelTimeout:
            outcome.stopped = "time-limit"
        except ModelError as exc:
            outcome.stopped, outcome.error = "error", exc.message
        outcome.changes = staging.diff()
        outcome.unread = staging.unread
    return outcome
