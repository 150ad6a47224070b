"""Proposals as protocol results: the language server and the CLI's `--json` print the same thing."""

from __future__ import annotations

from .. import protocol
from .apply import ApplyResult
from .model import Proposal


def proposal_result(p: Proposal) -> protocol.ProposalResult:
    return protocol.ProposalResult(
        id=p.id, source=p.source, summary=p.summary, tool_calls=p.tool_calls, workspace=p.workspace,
        created=p.created,
        changes=[protocol.ProposalChange(kind=c.kind, path=c.path, new_path=c.new_path, workspace=c.workspace,
                                         before=c.before, after=c.after, diff=c.diff) for c in p.changes],
    )  # fmt: skip


def apply_result(
    result: ApplyResult, extra: list[protocol.Conflict] | None = None
) -> protocol.ApplyProposalResult:
    conflicts = [protocol.Conflict(path=p, reason=r) for p, r in result.conflicts] + (extra or [])
    return protocol.ApplyProposalResult(
        applied=list(result.applied), conflicts=conflicts, applied_changes=list(result.applied_changes)
    )


def proposal_info(p: Proposal) -> protocol.ProposalInfo:
    paths = [c.new_path or c.path for c in p.changes]
    return protocol.ProposalInfo(id=p.id, source=p.source, summary=p.summary, created=p.created, paths=paths)
