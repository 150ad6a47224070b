"""What the reflection loop needs from a model provider: one request at a time, tool calls out, results in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Protocol

MAX_TOKENS = 4096
TOOL_NAME: Final = "memory"  # Final: the SDK types want the literal name
ERROR_DETAIL = 200  # characters of a server's error message kept in the summary


@dataclass(frozen=True)
class ToolCall:
    id: str
    input: dict[str, object] | None  # None when the call could not be understood (see problem)
    problem: str | None = None  # e.g. arguments that are not valid JSON, an unknown tool name


@dataclass(frozen=True)
class Turn:
    calls: list[ToolCall] = field(default_factory=list)
    text: str = ""


class ModelError(Exception):
    """The model endpoint failed (HTTP error, connection, rate limit); the message is for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ModelTimeout(ModelError):
    """The request ran past the pass's time limit."""


class Conversation(Protocol):
    def send(self, timeout: float) -> Turn:
        """Ask the model for its next turn (raises ModelError / ModelTimeout)."""

    def answer(self, results: list[tuple[ToolCall, str, bool]]) -> None:
        """Add the results of the turn's tool calls (text, is_error) for the next request."""

    def abort(self) -> None:
        """From another thread: end a request in flight now (the user cancelled)."""


def short(text: object) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= ERROR_DETAIL else s[:ERROR_DETAIL] + "…"


def http_error(status: int, message: object) -> ModelError:
    if status == 429:
        return ModelError(f"the model endpoint is rate limiting requests (HTTP 429): {short(message)}")
    if status in (401, 403):
        return ModelError(f"the model endpoint refused the API key (HTTP {status}): {short(message)}")
    return ModelError(f"the model endpoint answered HTTP {status}: {short(message)}")
