"""`kin.memory.info`: where the store is and how it was found, so the editors never resolve it themselves."""

from __future__ import annotations

import asyncio
from typing import Any

from .. import protocol
from ..store.info import store_info
from ..store.root import RootChoice
from ..store.settings import effective_settings
from .server import KinMemoryServer


def register(server: KinMemoryServer) -> None:
    @server.command("kin.memory.info")
    async def info(ls: KinMemoryServer, *args: Any) -> dict:
        protocol.parse(protocol.EmptyParams, args[0] if args else None)
        active = ls.context().active
        loop = asyncio.get_running_loop()
        settings = await loop.run_in_executor(None, effective_settings, list(active))
        sync = getattr(ls, "recall_sync", None)
        if sync is None:
            state = protocol.IndexState(state="unavailable", memories=0)
        else:
            count = await loop.run_in_executor(ls.query_pool, sync.recall.index.count)
            state = protocol.IndexState(state="ready" if sync.synced.is_set() else "building", memories=count)
        return protocol.dump(store_info(RootChoice(ls.root, ls.root_source), active, settings, state))
