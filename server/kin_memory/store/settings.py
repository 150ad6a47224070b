"""The kin settings files: `~/.kin/settings.toml` (global) and `<workspace>/.kin/settings.toml` (project)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Literal

from ..wording import value_kind
from .reader import Refused, read_file


def _toml() -> ModuleType:
    """The TOML parser, imported when a settings file is there to parse: most runs have none, and its
    import (with datetime and string) is 6 ms of every `kin-memory check`'s start."""
    import importlib

    return importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")


# A settings file is a few lines; a repository can plant anything at the path (a link to /dev/zero, a
# FIFO, a huge file), so reads stop here and anything larger is reported, not parsed.
MAX_SETTINGS_BYTES = 256 * 1024
KNOWN_KEYS = {"memory_enabled": bool, "memory_reflect": bool, "memory_dir": str, "recall_semantic": bool}
# Which way a project file may move each key: a repository is untrusted, so it may only make things
# stricter. "off": only `false` applies (memory or reflection off for that workspace), `true` changes
# nothing. "user": never taken from a project file, the user's value wins (where the store lives has no
# stricter side; the project's `memory_dir` is reported as KM700).
PROJECT_MAY: dict[str, Literal["off", "user"]] = {
    "memory_enabled": "off",
    "memory_reflect": "off",
    "memory_dir": "user",
    # The semantic layer's memory and CPU are the machine owner's to spend or save: the user's choice.
    "recall_semantic": "user",
}


@dataclass(frozen=True)
class SettingsProblem:
    """Something wrong in a settings file, located for a diagnostic (0-based line/col)."""

    path: Path
    code: str  # KM700 (project memory_dir) or KM701 (parse / type error)
    message: str
    line: int = 0
    col: int = 0
    end_col: int = 0


@dataclass(frozen=True)
class SettingsFile:
    path: Path
    values: dict[str, object] = field(default_factory=dict)
    problems: tuple[SettingsProblem, ...] = ()
    exists: bool = False
    text: str = ""  # what was read (bounded): diagnostics take their line text from here, not the file


def global_settings_path(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".kin" / "settings.toml"


def project_settings_path(workspace: str | Path) -> Path:
    return Path(workspace) / ".kin" / "settings.toml"


def _key_line(text: str, key: str) -> tuple[int, int, int]:
    for n, line in enumerate(text.splitlines()):
        stripped = line.lstrip()
        if stripped.startswith(key) and stripped[len(key) :].lstrip().startswith("="):
            col = len(line) - len(stripped)
            return n, col, len(line.rstrip())
    return 0, 0, 0


def _unread(path: Path, reason: str) -> SettingsFile:
    return SettingsFile(path, problems=(SettingsProblem(path, "KM701", reason),), exists=True)


def _kin_folder_leaves(kin: Path) -> bool:
    """Whether a project's `.kin` folder resolves outside its repository (a link to elsewhere)."""
    if not os.path.lexists(kin):
        return False
    real, repo = os.path.realpath(kin), os.path.realpath(kin.parent)
    return not real.startswith(repo.rstrip(os.sep) + os.sep)


def _read(path: Path, project: bool) -> bytes | SettingsFile:
    """The file's bytes, or the SettingsFile that reports why it was not read.

    A project file is planted by whatever repository is open: it may be a link only to another file in
    its own `.kin` folder. The global file is the user's own (often a link into a dotfiles repository),
    so it may point anywhere; both must be regular files under the size cap."""
    if project and _kin_folder_leaves(path.parent):
        return _unread(path, "the `.kin` folder is a link pointing outside the repository: not read")
    try:
        return read_file(path, MAX_SETTINGS_BYTES, within=path.parent if project else None).data
    except FileNotFoundError:
        return SettingsFile(path)
    except Refused as exc:
        if exc.kind == "outside":
            return _unread(path, "settings file is a link pointing outside its `.kin` folder: not read")
        return _unread(path, f"settings file is {exc.reason}: not read")
    except OSError as exc:
        return _unread(path, f"cannot read settings: {exc.strerror or 'the system refused'}")


def load_settings_file(path: Path, *, project: bool) -> SettingsFile:
    """Read one settings file; never raises, never blocks. Bad TOML, wrong types and files that are not
    plain, small, in-place files become problems."""
    raw = _read(path, project)
    if isinstance(raw, SettingsFile):
        return raw
    text = raw.decode("utf-8", errors="replace")
    tomllib = _toml()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = max(getattr(exc, "lineno", 1) - 1, 0)
        col = max(getattr(exc, "colno", 1) - 1, 0)
        msg = str(exc).split(" (at line")[0]
        return SettingsFile(
            path,
            problems=(
                SettingsProblem(path, "KM701", f"settings TOML does not parse: {msg}", line, col, col + 1),
            ),
            exists=True,
            text=text,
        )
    values: dict[str, object] = {}
    problems: list[SettingsProblem] = []
    for key, kind in KNOWN_KEYS.items():
        if key not in data:
            continue
        value = data[key]
        line, col, end = _key_line(text, key)
        if not isinstance(value, kind):
            problems.append(
                SettingsProblem(
                    path,
                    "KM701",
                    f"`{key}` must be a {'boolean' if kind is bool else 'string'}, got {value_kind(value)}",
                    line,
                    col,
                    end,
                )
            )
            continue
        if project and key == "memory_dir":
            problems.append(
                SettingsProblem(
                    path,
                    "KM700",
                    "`memory_dir` is global-only: a project settings file cannot move the memory store (ignored)",
                    line,
                    col,
                    end,
                )
            )
            continue
        values[key] = value
    return SettingsFile(path, values, tuple(problems), exists=True, text=text)


@dataclass(frozen=True)
class EffectiveSettings:
    memory_enabled: bool = True
    memory_reflect: bool = True
    disabled_by: Path | None = None  # the file that set memory_enabled = false
    files: tuple[SettingsFile, ...] = ()
    recall_semantic: bool = True  # recall ranks by meaning too (the language server also asks its editor)

    @property
    def problems(self) -> list[SettingsProblem]:
        return [p for f in self.files for p in f.problems]


def stricter(key: str, current: object, project: object) -> object:
    """`current` (the user's value so far) after a project file's value for `key` (None: not set): the
    project's value only where PROJECT_MAY lets it move that way, else `current` unchanged. An unknown key
    is the user's."""
    if PROJECT_MAY.get(key, "user") == "off" and project is False:
        return False
    return current


def effective_settings(
    workspaces: list[str] | tuple[str, ...] = (),
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> EffectiveSettings:
    """The one rule of settings precedence, for every door (the language server, the command line, the
    MCP server, `MemoryTool`): the user's global file, then the user's environment (KIN_MEMORY_REFLECT),
    then each project file through `stricter` (KIN_RECALL_SEMANTIC overrides `recall_semantic` likewise,
    which only the user sets). A repository may turn memory or reflection off for itself,
    never back on against the user's `false`, and never move the store."""
    env = os.environ if env is None else env
    user = load_settings_file(global_settings_path(home), project=False)
    projects = [load_settings_file(project_settings_path(w), project=True) for w in workspaces]
    enabled = bool(user.values.get("memory_enabled", True))
    reflect = bool(user.values.get("memory_reflect", True))
    disabled_by = None if enabled else user.path
    flag = env.get("KIN_MEMORY_REFLECT")
    if flag is not None and flag.strip() != "":
        reflect = flag.strip().lower() not in {"0", "false", "no", "off"}
    semantic = bool(user.values.get("recall_semantic", True))
    flag = env.get("KIN_RECALL_SEMANTIC")
    if flag is not None and flag.strip() != "":
        semantic = flag.strip().lower() not in {"0", "false", "no", "off"}
    for f in projects:
        merged = bool(stricter("memory_enabled", enabled, f.values.get("memory_enabled")))
        if enabled and not merged:
            disabled_by = f.path  # the file the "memory is disabled" sentence names
        enabled = merged
        reflect = bool(stricter("memory_reflect", reflect, f.values.get("memory_reflect")))
    return EffectiveSettings(enabled, reflect, disabled_by, (user, *projects), semantic)
