"""Model passes besides reflection, and the candidates behind one:

- `kin.memory.init {folder?}`: the repository's first memories from its documents, as a proposal;
- `kin.memory.consolidationCandidates {workspace?}`: duplicates, contradictions, stale facts and
  episodes to keep, computed without a model;
- `kin.memory.consolidate {workspace?}`: a model pass over those candidates, as a proposal.

Like `kin.memory.reflect`, nothing is written: proposals are kept in the hidden folder and applied as
reviewed by `kin.memory.applyProposal`. The provider settings are reflection's (`reflection.*`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ... import protocol
from ...consolidate.candidates import Candidate, survey
from ...consolidate.run import consolidate, consolidation_proposal
from ...initialize.run import InitError, init_proposal, initialize
from ...proposals import store as proposals
from ...proposals.model import Proposal
from ...proposals.results import proposal_result
from ...reflect import config as cfg
from ...store.home import home_relative
from ...store.memory import Memory
from ...store.workspace import is_inside
from ...tool import messages
from ...wording import sentence
from ..progress import Progress
from ..scheduler import Scheduler
from ..session import Session, uri_to_path
from .base import CommandFailed, Handler, workspace_arg
from .reflect import ReflectCommand, Work, run_pass

T = TypeVar("T")
READY_WAIT = 120.0  # seconds the candidates wait for the startup load


class PassCommands:
    def __init__(self, session: Session, scheduler: Scheduler, progress: Progress) -> None:
        self.session = session
        self.scheduler = scheduler
        self.progress = progress
        self.reflection = ReflectCommand(
            session, scheduler, progress
        )  # its provider settings, not its command

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {
            "kin.memory.init": self.init,
            "kin.memory.consolidationCandidates": self.candidates,
            "kin.memory.consolidate": self.consolidate,
        }

    # -- shared -----------------------------------------------------------------------------------
    async def _enabled(self, loop: asyncio.AbstractEventLoop) -> None:
        settings = await self.scheduler.run(self.session.file_settings)
        if not settings.memory_enabled:
            raise CommandFailed(messages.disabled(home_relative(settings.disabled_by)))

    def _provider(self) -> tuple[cfg.ReflectConfig, str]:
        config = self.reflection.config()
        try:
            label = self.reflection.setting_label
            cfg.check(config, label)
            return config, cfg.api_key(config, label=label)
        except cfg.ConfigError as exc:
            raise CommandFailed(sentence(str(exc))) from None

    def _workspace(self, value: str | None) -> str | None:
        """The one workspace a pass runs for: the argument ("none": the operator's view), else the first
        active workspace (a pass stamps new memories with one workspace)."""
        active = self.session.active() if value is None else workspace_arg(value)
        return active[0] if active else None

    async def _run(self, kind: str, title: str, work: Work[T]) -> T:
        """Run a pass as reflection does (see run_pass): in a worker, never holding up other requests,
        a cancel answering at once; a cancel proposes nothing."""
        return await run_pass(self.scheduler, self.progress, kind, title, work)

    async def _propose(self, proposal: Proposal) -> protocol.ProposalResult:
        if proposal.changes:
            await self.scheduler.run(proposals.save, self.session.root, proposal)
        return proposal_result(proposal)

    # -- init -------------------------------------------------------------------------------------
    def _folder(self, value: str | None) -> Path:
        if value:
            if value.startswith("file:"):
                path = uri_to_path(value)
                if path is None:
                    raise JsonRpcInvalidParams("folder: not a file URI")
                return path
            return Path(value).expanduser()
        for folder in self.session.folders:
            if not is_inside(os.path.realpath(folder), self.session.root):
                return Path(folder)
        raise CommandFailed("Open a folder (the repository to initialize from) or pass one.")

    async def init(self, params: protocol.InitParams) -> protocol.ProposalResult:
        loop = asyncio.get_running_loop()
        await self._enabled(loop)
        config, key = self._provider()
        folder = self._folder(params.folder)
        root = self.session.root

        def work(cancelled: Callable[[], bool], report: Callable[[str], None]) -> Proposal:
            outcome, sources, stamp = initialize(
                root, folder, config, key, cancelled=cancelled, progress=report
            )
            return init_proposal(root, outcome, sources, stamp)

        try:
            proposal = await self._run("init", "Memory initialization", work)
        except InitError as exc:
            raise CommandFailed(f"Cannot initialize from {folder}: {exc}.") from None
        return await self._propose(proposal)

    # -- consolidation ----------------------------------------------------------------------------
    def _survey(self, workspace: str | None) -> tuple[list[Candidate], dict[str, Memory]]:
        self.session.ready.wait(READY_WAIT)  # the startup load: the store is complete
        active = (workspace,) if workspace else ()
        ctx = self.session.context()
        found = survey(self.session.store, active, ctx.now, ctx.thresholds)
        memories = {p: m for c in found for p in c.paths if (m := self.session.store.get(p)) is not None}
        return found, memories

    async def candidates(self, params: protocol.WorkspaceParams) -> protocol.CandidatesResult:
        loop = asyncio.get_running_loop()
        await self._enabled(loop)
        found, _ = await self.scheduler.run(self._survey, self._workspace(params.workspace))
        return protocol.CandidatesResult(candidates=[
            protocol.ConsolidationCandidate(kind=c.kind, paths=list(c.paths),
                                            uris=[self.session.uri_of(p) for p in c.paths], reason=c.reason)
            for c in found
        ])  # fmt: skip

    async def consolidate(self, params: protocol.WorkspaceParams) -> protocol.ProposalResult:
        loop = asyncio.get_running_loop()
        await self._enabled(loop)
        config, key = self._provider()
        workspace = self._workspace(params.workspace)
        root = self.session.root

        def work(cancelled: Callable[[], bool], report: Callable[[str], None]) -> Proposal:
            report("finding candidates")
            found, memories = self._survey(workspace)
            done = consolidate(
                root, workspace, found, memories, config, key, cancelled=cancelled, progress=report
            )
            return consolidation_proposal(root, workspace, done)

        return await self._propose(await self._run("consolidate", "Memory consolidation", work))
