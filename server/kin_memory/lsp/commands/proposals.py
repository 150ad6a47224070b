"""Proposal commands: `kin.memory.applyProposal`, `kin.memory.discardProposal`, `kin.memory.listProposals`.

Applying asks no model anything: it writes the reviewed bytes on disk through the tool's guard (see
proposals/apply.py). A memory open in the editor with unsaved changes is a conflict (its buffer is what
the user is working on); an unmodified open buffer simply follows the file, as editors reload it.
"""

from __future__ import annotations

from pathlib import Path

from pygls.lsp.server import LanguageServer

from ... import protocol
from ...proposals import store as proposals
from ...proposals.apply import SelectionError, apply_proposal, chosen
from ...proposals.model import ProposedChange
from ...proposals.results import proposal_info
from ...store.memory import MAX_READ_BYTES
from ...store.reader import Refused, read_file
from ...wording import sentence
from ..features.documents import Documents
from ..scheduler import Scheduler
from ..session import Session
from .base import CommandFailed, Handler


class ProposalCommands:
    def __init__(self, session: Session, scheduler: Scheduler, documents: Documents) -> None:
        self.session = session
        self.scheduler = scheduler
        self.documents = documents

    def handlers(self, server: LanguageServer) -> dict[str, Handler]:
        """This group's commands (imported and built on the first call of any of them)."""
        return {
            "kin.memory.applyProposal": self.apply,
            "kin.memory.discardProposal": self.discard,
            "kin.memory.listProposals": self.list,
        }

    async def apply(self, params: protocol.ApplyProposalParams) -> protocol.ApplyProposalResult:
        root = self.session.root
        try:
            proposal = await self.scheduler.run(proposals.load, root, params.id)
        except proposals.ProposalError as exc:
            raise CommandFailed(sentence(str(exc))) from None
        if params.paths is not None:
            raise CommandFailed(
                "Changes are chosen by their index in the proposal (`changes`), not by path: a rename and "
                "a create can share one."
            )
        try:
            picked = chosen(proposal, params.changes)
        except SelectionError as exc:
            raise CommandFailed(sentence(str(exc))) from None
        dirty = self._unsaved(picked)
        wanted = [i for i, c in picked if i not in dirty]
        active = () if proposal.id in self.session.operator_proposals else self.session.active()
        result = await self.scheduler.run(lambda: apply_proposal(root, proposal, wanted, active=active))
        for path in result.applied:
            self.documents.external_change(self.session.path_of(path))
        if len(result.applied_changes) == len(proposal.changes):  # nothing left to review
            await self.scheduler.run(proposals.discard, root, proposal.id)
        conflicts = [protocol.Conflict(path=p, reason=r) for p, r in result.conflicts]
        conflicts += [
            protocol.Conflict(path=p, reason="it is open in the editor with unsaved changes")
            for p in dirty.values()
        ]
        return protocol.ApplyProposalResult(
            applied=result.applied, conflicts=conflicts, applied_changes=result.applied_changes
        )

    def _unsaved(self, picked: list[tuple[int, ProposedChange]]) -> dict[int, str]:
        """Chosen memories open in the editor with unsaved edits (the buffer differs from the file on
        disk), by change index: what the user is typing is never overwritten. A buffer equal to the disk
        is just a view of the file, and the file's own check (changed since the proposal?) decides."""
        out = {}
        for index, change in picked:
            if not self.session.store.is_open(change.path):
                continue
            memory = self.session.store.get(change.path)
            on_disk = _disk_text(self.session.path_of(change.path))
            if memory is not None and memory.text != on_disk:
                out[index] = change.path
        return out

    async def discard(self, params: protocol.ProposalIdParams) -> protocol.OkResult:
        try:
            await self.scheduler.run(proposals.discard, self.session.root, params.id)
        except proposals.ProposalError as exc:
            raise CommandFailed(sentence(str(exc))) from None
        return protocol.OkResult()

    async def list(self, _params: protocol.EmptyParams) -> protocol.ListProposalsResult:
        found = await self.scheduler.run(proposals.list_all, self.session.root)
        return protocol.ListProposalsResult(proposals=[proposal_info(p) for p in found])


def _disk_text(path: Path) -> str | None:
    try:
        return read_file(path, MAX_READ_BYTES).data.decode("utf-8", "replace")
    except (Refused, OSError):
        return None
