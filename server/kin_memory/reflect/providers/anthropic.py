"""Anthropic Messages API with the native memory tool (`memory_20250818`), through the official SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import MAX_TOKENS, TOOL_NAME, ModelError, ModelTimeout, ToolCall, Turn, http_error, short

if TYPE_CHECKING:  # the SDK is optional at run time; its types are only needed by the type checker
    from anthropic.types import (
        ContentBlock,
        ContentBlockParam,
        MessageParam,
        ToolResultBlockParam,
        ToolUnionParam,
        ToolUseBlock,
    )

TOOL: ToolUnionParam = {"type": "memory_20250818", "name": TOOL_NAME}


def _tool_call(block: ToolUseBlock) -> ToolCall:
    if block.name != TOOL_NAME:
        return ToolCall(block.id, None, f"unknown tool {short(block.name)!s}: only `memory` exists")
    if not isinstance(block.input, dict):  # typed as a dict, but a server may send anything
        return ToolCall(block.id, None, "the tool input must be a JSON object")
    return ToolCall(block.id, dict(block.input))


class AnthropicConversation:
    def __init__(self, *, model: str, base_url: str | None, api_key: str, system: str, user: str) -> None:
        try:
            import anthropic
        except ImportError:
            raise ModelError(
                "the anthropic package is not installed (it is a dependency of kin-memory: reinstall kin-memory)"
            ) from None
        self._sdk = anthropic
        # No retries: the pass has its own time bound and a clear summary beats a silent wait.
        self.client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0)
        self.model = model
        self.system = system
        self.messages: list[MessageParam] = [{"role": "user", "content": user}]

    def abort(self) -> None:
        # Closing the HTTP client ends the blocked read in the thread that is waiting for the model.
        self.client.close()

    def send(self, timeout: float) -> Turn:
        sdk = self._sdk
        try:
            resp = self.client.messages.create(
                model=self.model,
                max_tokens=MAX_TOKENS,
                system=self.system,
                tools=[TOOL],
                messages=self.messages,
                timeout=timeout,
            )
        except sdk.APITimeoutError:
            raise ModelTimeout("the model did not answer in time") from None
        except sdk.APIStatusError as exc:
            raise http_error(exc.status_code, getattr(exc, "message", exc)) from None
        except sdk.APIConnectionError:
            raise ModelError("could not connect to the model endpoint") from None
        except sdk.APIError as exc:  # e.g. a response that is not the Messages shape
            raise ModelError(f"unexpected answer from the model endpoint: {short(exc)}") from None
        return self._turn(resp.content or [])

    def _turn(self, content: list[ContentBlock]) -> Turn:
        """The model's text and tool calls; the turn is echoed back as the assistant message."""
        from anthropic.types import TextBlock, ToolUseBlock

        echoed: list[ContentBlockParam] = []
        calls: list[ToolCall] = []
        texts: list[str] = []
        for block in content:
            # getattr: a block the SDK could not parse may lack even its type; it is skipped
            kind = getattr(block, "type", None)
            if kind == "text" and isinstance(block, TextBlock):
                texts.append(block.text)
                echoed.append({"type": "text", "text": block.text})
            elif kind == "tool_use" and isinstance(block, ToolUseBlock):
                echoed.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
                calls.append(_tool_call(block))
        if echoed:
            self.messages.append({"role": "assistant", "content": echoed})
        return Turn(calls, "\n".join(texts).strip())

    def answer(self, results: list[tuple[ToolCall, str, bool]]) -> None:
        content: list[ToolResultBlockParam] = [
            {"type": "tool_result", "tool_use_id": call.id, "content": text, "is_error": is_error}
            for call, text, is_error in results
        ]
        self.messages.append({"role": "user", "content": content})
