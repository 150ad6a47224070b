"""Reflection settings: which model to ask, where, with which key (by env var name), and the bounds.

The key itself is read from the environment only when a pass runs and is never stored, logged or echoed.
Editor settings are `kinMemory.reflection.{provider, model, baseUrl, apiKeyEnv, maxToolCalls,
timeoutSeconds}`; the command line has the same as flags.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

PROVIDERS = ("anthropic", "openai")
DEFAULT_MAX_TOOL_CALLS = 16
DEFAULT_TIMEOUT = 90.0
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
# OpenAI-compatible local servers (Ollama, llama.cpp, vLLM) accept any key; the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed"


class ConfigError(Exception):
    """Reflection cannot run with these settings; the message names what to set."""


@dataclass(frozen=True)
class ReflectConfig:
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    timeout: float = DEFAULT_TIMEOUT

    @property
    def key_env(self) -> str:
        return self.api_key_env or DEFAULT_KEY_ENV.get(self.provider or "", "")

    def __repr__(self) -> str:  # never carries the key, but keep it obvious in logs
        return (
            f"ReflectConfig(provider={self.provider!r}, model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key_env={self.key_env!r}, max_tool_calls={self.max_tool_calls}, timeout={self.timeout})"
        )


Label = Callable[[str], str]  # a reflection setting's key ("provider", "baseUrl", …) → its name for the user
FLAGS = {"provider": "--provider", "model": "--model", "baseUrl": "--base-url", "apiKeyEnv": "--api-key-env"}


def flag_label(key: str) -> str:
    return FLAGS[key]


def check(config: ReflectConfig, label: Label) -> None:
    """Raise ConfigError naming the settings (or flags) still to set, as the user's front end names them."""
    missing = []
    if config.provider is None:
        missing.append(label("provider"))
    elif config.provider not in PROVIDERS:
        raise ConfigError(
            f"unknown reflection provider {config.provider!r}: set {label('provider')} to one of {', '.join(PROVIDERS)}"
        )
    if config.model is None:
        missing.append(label("model"))
    if missing:
        raise ConfigError(
            "reflection is not configured: set "
            + " and ".join(missing)
            + f" (and optionally {label('baseUrl')}, {label('apiKeyEnv')})"
        )


def api_key(config: ReflectConfig, env: Mapping[str, str] | None = None, *, label: Label) -> str:
    """The key from the named environment variable; a placeholder for a keyless local endpoint."""
    env = os.environ if env is None else env
    value = env.get(config.key_env, "") if config.key_env else ""
    if value:
        return value
    if config.provider == "openai" and config.base_url:
        return LOCAL_PLACEHOLDER_KEY
    where = label("apiKeyEnv")
    raise ConfigError(
        f"no API key: the environment variable {config.key_env or '(none)'} is not set "
        f"(set it, or name another variable with {where})"
    )
