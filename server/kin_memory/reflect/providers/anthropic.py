"""Anthropic Messages API with the native memory tool (`memory_20250818`), through the official SDK."""

from __future__ import annotations

from .base import MAX_TOKENS, TOOL_NAME, ModelError, ModelTimeout, ToolCall, Turn, http_error, short

TOOL = {"type": "memory_20250818", "name": TOOL_NAME}


class AnthropicConversation:
    def __init__(self, *, model: str, base_url: str | None, api_key: str, system: str, user: str) -> None:
        try:
            import anthropic
        except ImportError:
            raise ModelError(
                "the anthropic package is not installed (pip install 'kin-memory[reflect]')"
            ) from None
        self._sdk = anthropic
        # No retries: the pass has its own time bound and a clear summary beats a silent wait.
        self.client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0)
        self.model = model
        self.system = system
        self.messages: list[dict] = [{"role": "user", "content": user}]

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
        echoed: list[dict] = []
        calls: list[ToolCall] = []
        texts: list[str] = []
        for block in resp.content or []:
            kind = getattr(block, "type", None)
            if kind == "text":
                texts.append(block.text)
                echoed.append({"type": "text", "text": block.text})
            elif kind == "tool_use":
                echoed.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
                if block.name != TOOL_NAME:
                    calls.append(
                        ToolCall(block.id, None, f"unknown tool {short(block.name)!s}: only `memory` exists")
                    )
                elif not isinstance(block.input, dict):
                    calls.append(ToolCall(block.id, None, "the tool input must be a JSON object"))
                else:
                    calls.append(ToolCall(block.id, dict(block.input)))
        if echoed:
            self.messages.append({"role": "assistant", "content": echoed})
        return Turn(calls, "\n".join(texts).strip())

    def answer(self, results: list[tuple[ToolCall, str, bool]]) -> None:
        self.messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call.id, "content": text, "is_error": is_error}
                    for call, text, is_error in results
                ],
            }
        )
