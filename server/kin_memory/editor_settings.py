"""The editor's `kinMemory` settings section, typed once.

The language server reads the section from `initializationOptions` and `workspace/configuration`; every
consumer receives a `Settings` value, never the raw dict. A value of the wrong type or out of range is
replaced by its default and reported as a `SettingProblem` (the server shows it once per change), so a
typo is never silently ignored. Keys this server does not know are ignored: newer editors may send more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from .strict_conversion import camel, strict_converter

converter = strict_converter()

ToolMode = Literal["auto", "strict", "plan"]
Level = Literal["error", "warning", "information", "hint", "off"]
Provider = Literal["anthropic", "openai"]
OnOff = Literal["on", "off"]

_positive_int = attrs.validators.gt(0)
_positive = attrs.validators.gt(0.0)


@attrs.frozen
class ReflectionSettings:
    provider: Provider | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None  # the NAME of the environment variable holding the key
    max_tool_calls: int = attrs.field(default=16, validator=_positive_int)
    timeout_seconds: float = attrs.field(default=90.0, validator=_positive)


@attrs.frozen
class ServerLaunchSettings:
    """Read by the VS Code extension to start the server; the server itself ignores them."""

    path: str | None = None
    args: list[str] = attrs.field(factory=list)


@attrs.frozen
class HistorySettings:
    """How many previous versions of each memory the version store keeps (see history/retention.py)."""

    keep_versions: int = attrs.field(default=20, validator=_positive_int)
    keep_days: float = attrs.field(default=90.0, validator=_positive)
    max_megabytes: float = attrs.field(default=50.0, validator=_positive)


@attrs.frozen
class HoverSettings:
    """Body-text hover: `related` lists the memories most related to the hovered paragraph (above the
    relevance floor, so it may show nothing); `off` shows no recall hover at all."""

    related: OnOff = "on"


@attrs.frozen
class RecallSettings:
    """`semantic`: rank recall by meaning too (the semantic layer: a sentence model and a vector per
    memory, filled in the background); `off` ranks by words only and loads nothing of the layer."""

    semantic: OnOff = "on"


@attrs.frozen
class SyncSettings:
    """Automatic sync of a store that already has a remote (`kin-memory sync --remote URL` once): every
    `interval_minutes` (0: never) and/or `after_writes`, once the store has been quiet for a minute after
    a change. Both off by default: a sync sends memories to another machine."""

    interval_minutes: float = attrs.field(default=0.0, validator=attrs.validators.ge(0.0))
    after_writes: bool = False


@attrs.frozen
class Settings:
    memory_dir: str | None = None
    workspace: str | None = None  # overrides the active workspace
    stale_days: float = attrs.field(default=180.0, validator=_positive)
    episodic_days: float = attrs.field(default=42.0, validator=_positive)
    session_hours: float = attrs.field(default=24.0, validator=_positive)
    tool_mode: ToolMode = "auto"
    severity: dict[str, Level] = attrs.field(factory=dict)  # code → level or "off"
    reflection: ReflectionSettings = attrs.field(factory=ReflectionSettings)
    history: HistorySettings = attrs.field(factory=HistorySettings)
    hover: HoverSettings = attrs.field(factory=HoverSettings)
    recall: RecallSettings = attrs.field(factory=RecallSettings)
    sync: SyncSettings = attrs.field(factory=SyncSettings)
    server: ServerLaunchSettings = attrs.field(factory=ServerLaunchSettings)


@attrs.frozen
class SettingProblem:
    key: str  # the dotted wire name below the section, e.g. "reflection.maxToolCalls"
    value: object
    expected: str

    def message(self, label: Callable[[str], str]) -> str:
        shown = repr(self.value) if not isinstance(self.value, str) else f'"{_clip(self.value)}"'
        return f"The setting {label(self.key)} has an invalid value {shown} ({self.expected}); using the default."


def _clip(text: str, limit: int = 60) -> str:
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[:limit] + "…"


def parse_settings(raw: object) -> tuple[Settings, list[SettingProblem]]:
    """The section as typed settings plus what had to be replaced by a default."""
    problems: list[SettingProblem] = []
    settings = _parse_class(Settings, raw if isinstance(raw, Mapping) else {}, "", problems)
    return settings, problems


def _parse_class(cls: type, raw: Mapping[str, Any], prefix: str, problems: list[SettingProblem]) -> Any:
    values: dict[str, Any] = {}
    for field in attrs.fields(cls):
        key = camel(field.name)
        if key not in raw or raw[key] is None:
            continue
        value = raw[key]
        if attrs.has(field.type):
            if isinstance(value, Mapping):
                values[field.name] = _parse_class(field.type, value, f"{prefix}{key}.", problems)
            else:
                problems.append(SettingProblem(prefix + key, value, "expected an object"))
            continue
        if field.name == "severity":
            values[field.name] = _parse_severity(value, prefix + key, problems)
            continue
        parsed = _parse_value(field, value)
        if field.name == "workspace" and isinstance(parsed, str):
            parsed = _parse_workspace(parsed)
        if isinstance(parsed, SettingProblem):
            problems.append(attrs.evolve(parsed, key=prefix + key))
        else:
            values[field.name] = parsed
    return cls(**values)


def _parse_value(field: attrs.Attribute[Any], value: object) -> object:
    try:
        assert field.type is not None  # resolved at import (see the end of this module)
        parsed = converter.structure(value, field.type)
        if field.validator is not None:
            field.validator(None, field, parsed)
    except Exception as exc:  # noqa: BLE001 - cattrs reports through several exception groups
        return SettingProblem("", value, _expected(field, exc))
    return parsed


def _parse_workspace(value: str) -> str | SettingProblem:
    """A label is kept verbatim and a path is canonicalised later (store.workspace.workspace_value);
    here only what no stamp could carry is refused (a relative path, an unsafe label)."""
    from .store.workspace import WorkspaceValueError, workspace_value

    try:
        workspace_value(value)
    except WorkspaceValueError:
        return SettingProblem("", value, "expected an absolute path, global, none or a label without /")
    return value


LEVELS = ("error", "warning", "information", "hint", "off")


def _parse_severity(raw: object, key: str, problems: list[SettingProblem]) -> dict[str, Level]:
    """Per code: a bad level drops that entry only (the other codes keep theirs)."""
    if not isinstance(raw, Mapping):
        problems.append(SettingProblem(key, raw, "expected an object of code → level"))
        return {}
    out: dict[str, Level] = {}
    for code, level in raw.items():
        if isinstance(code, str) and level in LEVELS:
            out[code] = level
        else:
            problems.append(SettingProblem(f"{key}.{code}", level, f"expected one of {', '.join(LEVELS)}"))
    return out


def _expected(field: attrs.Attribute[Any], exc: BaseException) -> str:
    text = str(field.type)
    if "Literal" in text:
        options = text.split("Literal[", 1)[1].split("]", 1)[0].replace("'", "")
        return f"expected one of {options}"
    if field.validator is not None and isinstance(exc, ValueError) and "must be" in str(exc):
        return "expected a positive number"
    if "float" in text or "int" in text:
        return "expected a positive number"
    if "list" in text:
        return "expected a list of strings"
    return "expected a string"


for _cls in (
    ReflectionSettings,
    ServerLaunchSettings,
    HistorySettings,
    HoverSettings,
    RecallSettings,
    SyncSettings,
    Settings,
):
    attrs.resolve_types(_cls)  # field types are strings under postponed annotations
