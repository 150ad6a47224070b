"""OpenAI-compatible chat completions (OpenAI, Ollama, llama.cpp server, vLLM) through the official SDK.

The memory tool is declared as a function whose parameters are the union of the six commands'.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .base import MAX_TOKENS, TOOL_NAME, ModelError, ModelTimeout, ToolCall, Turn, http_error, short

if TYPE_CHECKING:  # the SDK is optional at run time; its types are only needed by the type checker
    from openai.types.chat import (
        ChatCompletionAssistantMessageParam,
        ChatCompletionMessageParam,
        ChatCompletionMessageToolCallParam,
        ChatCompletionToolParam,
    )
    from openai.types.shared_params import FunctionParameters

PARAMETERS: FunctionParameters = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
        },
        "path": {"type": "string", "description": "a path starting with /memories"},
        "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
        "file_text": {"type": "string", "description": "create: the whole file"},
        "old_str": {"type": "string"},
        "new_str": {"type": "string"},
        "insert_line": {"type": "integer", "description": "0 inserts before the first line"},
        "insert_text": {"type": "string"},
        "old_path": {"type": "string"},
        "new_path": {"type": "string"},
    },
    "required": ["command"],
}
TOOL: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Read and write the memory store under /memories: view a folder or file, create a file, "
        "str_replace or insert text in a file, delete or rename a file.",
        "parameters": PARAMETERS,
    },
}


class OpenAIConversation:
    def __init__(self, *, model: str, base_url: str | None, api_key: str, system: str, user: str) -> None:
        try:
            import openai
        except ImportError:
            raise ModelError(
                "the openai package is not installed (it is a dependency of kin-memory: reinstall kin-memory)"
            ) from None
        self._sdk = openai
        self.client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0)
        self.model = model
        self.messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]

    def abort(self) -> None:
        # Closing the HTTP client ends the blocked read in the thread that is waiting for the model.
        self.client.close()

    def send(self, timeout: float) -> Turn:
        sdk = self._sdk
        try:
            resp = self.client.chat.completions.create(
                model=self.model, messages=self.messages, tools=[TOOL], max_tokens=MAX_TOKENS, timeout=timeout
            )
        except sdk.APITimeoutError:
            raise ModelTimeout("the model did not answer in time") from None
        except sdk.APIStatusError as exc:
            raise http_error(exc.status_code, getattr(exc, "message", exc)) from None
        except sdk.APIConnectionError:
            raise ModelError("could not connect to the model endpoint") from None
        except sdk.OpenAIError as exc:
            raise ModelError(f"unexpected answer from the model endpoint: {short(exc)}") from None
        if not getattr(resp, "choices", None):
            raise ModelError("the model endpoint answered without a choice")
        msg = resp.choices[0].message
        calls: list[ToolCall] = []
        echoed_calls: list[ChatCompletionMessageToolCallParam] = []
        for tc in msg.tool_calls or []:
            fn = getattr(tc, "function", None)
            name = getattr(fn, "name", None)
            raw = getattr(fn, "arguments", None)
            # Echoed as the server sent it: OpenAI-compatible servers may send the arguments as an object
            # (or a call without a name), which the SDK's str-typed fields do not describe.
            function = {"name": name, "arguments": raw}
            echoed_calls.append({"id": tc.id, "type": "function", "function": function})  # type: ignore[typeddict-item]  # name/arguments as sent, maybe not str
            if name != TOOL_NAME:
                calls.append(ToolCall(tc.id, None, f"unknown tool {short(name)}: only `memory` exists"))
                continue
            try:
                args = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                calls.append(ToolCall(tc.id, None, "the tool call arguments are not valid JSON"))
                continue
            if not isinstance(args, dict):
                calls.append(ToolCall(tc.id, None, "the tool call arguments must be a JSON object"))
            else:
                calls.append(ToolCall(tc.id, args))
        echo: ChatCompletionAssistantMessageParam = {"role": "assistant", "content": msg.content or ""}
        if echoed_calls:
            echo["tool_calls"] = echoed_calls
        self.messages.append(echo)
        return Turn(calls, (msg.content or "").strip())

    def answer(self, results: list[tuple[ToolCall, str, bool]]) -> None:
        for call, text, _is_error in results:
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
