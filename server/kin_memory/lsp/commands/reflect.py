"""`kin.memory.reflect`: one bounded pass against a staging copy, returned as a proposal.

Nothing is written: the proposal (whole texts before and after, with diffs) is kept in the hidden folder
and applied later, exactly as reviewed, by `kin.memory.applyProposal`.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from ... import protocol
from ...proposals import store as proposals
from ...proposals.results import proposal_result
from ...reflect import config as cfg
from ...reflect import transcript as transcripts
from ...reflect.propose import proposal_of
from ...reflect.run import Cancelled, reflect
from ...tool import messages
from ...wording import counted, sentence
from ..progress import Progress
from ..session import Session, uri_to_path
from .base import CommandFailed, Handler


class ReflectCommand:
    def __init__(self, session: Session, progress: Progress) -> None:
        self.session = session
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
        loop = asyncio.get_running_loop()
        settings = await loop.run_in_executor(None, self.session.file_settings)
        if not settings.memory_enabled:
            raise CommandFailed(messages.disabled(settings.disabled_by))
        config = self.config()
        try:
            label = self.setting_label
            cfg.check(config, label)
            key = cfg.api_key(config, label=label)
            source = _transcript_path(params.transcript)
            transcript = await loop.run_in_executor(None, transcripts.read, source, params.transcript)
        except (cfg.ConfigError, transcripts.TranscriptError) as exc:
            raise CommandFailed(sentence(str(exc))) from None
        active = self.session.active()
        workspace = active[0] if len(active) == 1 else None
        root = self.session.root
        task = await self.progress.begin("reflect", "Memory reflection", cancellable=True)
        stop = threading.Event()  # $/cancelRequest for this command, or the progress bar's Cancel

        def cancelled() -> bool:
            return stop.is_set() or task.cancelled()

        try:
            outcome = await loop.run_in_executor(None, lambda: reflect(
                root, transcript, config, key, workspace, cancelled=cancelled, progress=task.report))  # fmt: skip
        except asyncio.CancelledError:
            stop.set()  # the pass stops at once, its model request abandoned
            task.end("cancelled")
            raise
        except Cancelled:
            task.end("cancelled")
            raise CommandFailed("Reflection was cancelled; nothing was proposed.") from None
        proposal = proposal_of(root, outcome, workspace)
        if proposal.changes:
            await loop.run_in_executor(None, proposals.save, root, proposal)
        task.end(
            f"{counted(len(proposal.changes), 'change')} proposed" if proposal.changes else "nothing to write"
        )
        return proposal_result(proposal)


def _transcript_path(value: str) -> Path:
    if value.startswith("file:"):
        path = uri_to_path(value)
        if path is None:
            raise JsonRpcInvalidParams("transcript: not a file URI")
        return path
    return Path(value).expanduser()
