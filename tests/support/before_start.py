"""The store a test's server serves is built before that server is spawned.

pytest-lsp spawns the server before a client fixture's body runs, and the server's start-up workers list
the store as soon as it starts: a store built in the fixture's body races them (the start-up's catch-up
and the watcher find the rest, but a test asserting right after the first check could see a part)."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def store_built_first(build: Callable[[], None]):
    """An autouse fixture: every test of the module starts from a freshly built store, built before any
    client fixture (the clients are picked by parameter, so the fixture cannot tell which test uses one)."""

    @pytest.fixture(autouse=True)
    def store_before_the_server() -> None:
        build()

    return store_before_the_server
