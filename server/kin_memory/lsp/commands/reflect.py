"""`kin.memory.reflect`: one bounded pass against a staging copy, returned as a proposal.

Nothing is written: the proposal (whole texts before and after, with diffs) is kept in the hidden folder
and applied later, exactly as reviewed, by `kin.memory.applyProposal`.

`run_pass` is how every model pass (reflect, init, consolidate) runs: the whole pass, proposal included,
in a worker thread, so search, hover and the memory tool answer meanwhile; a cancel answers at once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ... import protocol
from ...proposals import store as proposals
from ...proposals.model import Proposal
from ...proposals.results import proposal_result
from ...reflect import config as cfg
from ...reflect import transcript as transcripts
from ...reflect.propose import proposal_of
from ...reflect.run import Cancelled, reflect
from ...store.workspace import own_workspaces
from ...tool import messages
from ...wording import counted, sentence
from ..progress import Progress
from ..scheduler import Scheduler
from ..session import Session, uri_to_path
from .base import CommandFailed, Handler

T = TypeVar("T")
CANCEL_POLL = 0.1  # seconds between looks at the progress bar's Cancel while a pass runs
Work = Callable[[Callable[[], bool], Callable[[str], None]], T]  # (cancelled, report) -> result


async def run_pass(scheduler: Scheduler, progress: Progress, kind: str, title: str, work: Work[T],
                   ended: Callable[[T], str] = lambda _: "finished") -> T:  # fmt: skip
    """Run a model pass in a worker of the background pool under a cancellable progress bar; the loop
    only waits. A cancel answers within CANCEL_POLL: `$/cancelRequest` cancels this coroutine (the
    editor gets RequestCancelled), the progress bar's Cancel is looked at here as well as by the pass.
    Either way the pass is told to stop and is abandoned, not waited for: a worker stuck in a call that
    does not look at the flag cannot hold the answer back."""
    task = await progress.begin(kind, title, cancellable=True)
    stop = threading.Event()

    def cancelled() -> bool:
        return stop.is_set() or task.cancelled()

    future = scheduler.run(work, cancelled, task.report)
    future.add_done_callback(_settled)
    try:
        while not future.done():
            await asyncio.wait({future}, timeout=CANCEL_POLL)
            if task.cancelled() and not future.done():
                raise Cancelled()
        result = future.result()
    except asyncio.CancelledError:
        stop.set()
        task.end("cancelled")
        raise
    except Cancelled:
        stop.set()
        task.end("cancelled")
        raise CommandFailed(f"{title} was cancelled; nothing was proposed.") from None
    except BaseException:
        task.end("failed")
        raise
    task.end(ended(result))
    return result


def _settled(future: asyncio.Future[Any]) -> None:
    """An abandoned pass's late failure is dropped here, not logged as an exception nobody retrieved."""
    if not future.cancelled():
        future.exception()


class ReflectCommand:
    def __init__(self, session: Session, scheduler: Scheduler, progress: Progress) -> None:
        self.session = session
        self.scheduler = scheduler
        self.progress = progress

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {
            "kin.memory.reflect": self.reflect,
        }

    def setting_label(self, key: str) -> str:
        return self.session.setting_label(f"reflection.{key}")

    def config(self) -> cfg.ReflectConfig:
        r = self.session.settings.reflection
        return cfg.ReflectConfig(provider=r.provider, model=r.model, base_url=r.base_url, api_key_env=r.api_key_env,
                                 max_tool_calls=r.max_tool_calls, timeout=r.timeout_seconds)  # fmt: skip

    async def reflect(self, params: protocol.ReflectParams) -> protocol.ProposalResult:
        settings = await self.scheduler.run(self.session.file_settings)
        if not settings.memory_enabled:
            raise CommandFailed(messages.disabled(settings.disabled_by))
        config = self.config()
        try:
            label = self.setting_label
            cfg.check(config, label)
            key = cfg.api_key(config, label=label)
            source = _transcript_path(params.transcript)
            transcript = await self.scheduler.run(transcripts.read, source, params.transcript)
        except (cfg.ConfigError, transcripts.TranscriptError) as exc:
            raise CommandFailed(sentence(str(exc))) from None
        active = own_workspaces(self.session.active(), self.session.root)
        workspace = active[0] if len(active) == 1 else None
        root = self.session.root

        def work(cancelled: Callable[[], bool], report: Callable[[str], None]) -> Proposal:
            outcome = reflect(root, transcript, config, key, workspace, cancelled=cancelled, progress=report)
            proposal = proposal_of(root, outcome, workspace)
            if cancelled():  # cancelled while the proposal was built: nothing is kept
                raise Cancelled()
            if proposal.changes:
                proposals.save(root, proposal)
            return proposal

        def ended(proposal: Proposal) -> str:
            return (
                f"{counted(len(proposal.changes), 'change')} proposed"
                if proposal.changes
                else "nothing to write"
            )

        proposal = await run_pass(self.scheduler, self.progress, "reflect", "Memory reflection", work, ended)
        return proposal_result(proposal)


def _transcript_path(value: str) -> Path:
    if value.startswith("file:"):
        path = uri_to_path(value)
        if path is None:
            raise JsonRpcInvalidParams("transcript: not a file URI")
        return path
    return Path(value).expanduser()
