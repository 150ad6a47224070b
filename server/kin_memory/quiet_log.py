"""A module's logger, made the first time it says something.

The `logging` package (with the threading and traceback modules it imports) takes some 3.6 ms to import.
A whole-store `kin-memory check` logs nothing unless something fails, so the modules on its path name
their logger here instead of importing `logging` at the top: the package is imported by the first
message, if any. In the language server `logging` is imported anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging


class LazyLogger:
    """What `logging.getLogger(name)` gives, got when first used."""

    __slots__ = ("_name", "_logger")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: logging.Logger | None = None

    def _get(self) -> logging.Logger:
        if self._logger is None:
            import logging

            self._logger = logging.getLogger(self._name)
        return self._logger

    def info(self, msg: str, *args: Any) -> None:
        self._get().info(msg, *args)

    def warning(self, msg: str, *args: Any) -> None:
        self._get().warning(msg, *args)
