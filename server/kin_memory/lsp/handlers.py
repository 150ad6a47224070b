"""Bound methods as pygls handlers: pygls tags each handler function with attributes, which a bound
method cannot carry, so each is wrapped in a plain function of the same kind (sync or async)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def handler(method: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if inspect.iscoroutinefunction(method):

        async def run_async(params: Any) -> Any:
            return await method(params)

        run: Callable[[Any], Any] = run_async
    else:

        def run_sync(params: Any) -> Any:
            return method(params)

        run = run_sync
    run.__name__ = getattr(method, "__name__", "handler")
    run.__doc__ = method.__doc__
    return run
