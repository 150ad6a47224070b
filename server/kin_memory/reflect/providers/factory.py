"""Pick the provider adapter for a pass.

Kept apart from base.py so the adapters can import base without base importing them back; the SDKs
(optional dependencies) are imported only here, only when a pass runs.
"""

from __future__ import annotations

from .base import Conversation, ModelError


def open_conversation(
    provider: str, *, model: str, base_url: str | None, api_key: str, system: str, user: str
) -> Conversation:
    if provider == "anthropic":
        from .anthropic import AnthropicConversation

        return AnthropicConversation(
            model=model, base_url=base_url, api_key=api_key, system=system, user=user
        )
    if provider == "openai":
        from .openai import OpenAIConversation

        return OpenAIConversation(model=model, base_url=base_url, api_key=api_key, system=system, user=user)
    raise ModelError(f"unknown provider {provider!r}")
