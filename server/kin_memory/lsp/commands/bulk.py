"""Bulk fixes: `kin.memory.fixAll` (the store's safe fixes) and `kin.memory.restamp` (every memory of a
moved repository), each one proposal for the editor to review and apply with `kin.memory.applyProposal`.
Computed from the files on disk, off the event loop; nothing is written here."""

from __future__ import annotations

import os

from pygls.lsp.server import LanguageServer

from ... import protocol
from ...proposals.bulk import fix_all, restamp
from ...proposals.results import proposal_result
from ...store.workspace import GLOBAL
from ..scheduler import Scheduler
from ..session import Session
from .base import CommandFailed, Handler


class BulkCommands:
    def __init__(self, session: Session, scheduler: Scheduler) -> None:
        self.session = session
        self.scheduler = scheduler

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {
            "kin.memory.fixAll": self.fix_all,
            "kin.memory.restamp": self.restamp,
        }

    async def fix_all(self, _params: protocol.EmptyParams) -> protocol.ProposalResult:
        proposal = await self.scheduler.run(fix_all, self.session.root, self.session.context())
        self.session.operator_proposals.add(proposal.id)
        return proposal_result(proposal)

    async def restamp(self, params: protocol.RestampParams) -> protocol.ProposalResult:
        to = params.to.strip()
        if to != GLOBAL:
            if not os.path.isabs(to) or not os.path.isdir(to):
                raise CommandFailed(
                    f"{to or 'The new stamp'} is not a folder: give the repository's path now, or global."
                )
            to = os.path.realpath(to)  # stamps are realpaths
        stamped = [m.vpath for m in self.session.store.memories() if m.stamp == params.stamp]
        proposal = await self.scheduler.run(restamp, self.session.root, params.stamp, to, stamped)
        self.session.operator_proposals.add(proposal.id)
        return proposal_result(proposal)
