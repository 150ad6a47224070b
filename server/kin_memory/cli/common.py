"""What every subcommand resolves the same way: the store root, the active workspace, the settings files
in effect, and whether recall may answer. Text for the terminal goes through `sinks.terminal`."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..sinks import terminal

if TYPE_CHECKING:  # every subcommand module is imported to build the parser: keep that import light
    from ..store.root import RootChoice
    from ..store.settings import EffectiveSettings


class UsageError(Exception):
    """A bad argument or unusable input: printed as one line, exit status 2."""


@dataclass(frozen=True)
class Target:
    """The store a command works on and from where it looks at it."""

    root_choice: RootChoice
    workspace: str | None  # None: the operator's unfiltered view

    @property
    def root(self) -> Path:
        return self.root_choice.path

    @property
    def active(self) -> tuple[str, ...]:
        from ..store.workspace import with_equivalents

        return with_equivalents((self.workspace,), self.root)

    def settings(self) -> EffectiveSettings:
        return settings_for(self.workspace)

    def require_recall(self) -> None:
        """Recall (search, the prompt preview) answers nothing while `memory_enabled = false`: the memory
        tool's sentence, naming the settings file that says so."""
        from ..store.home import home_relative
        from ..tool.messages import disabled

        settings = self.settings()
        if not settings.memory_enabled:
            raise UsageError(disabled(home_relative(settings.disabled_by)))


def settings_for(workspace: str | None) -> EffectiveSettings:
    from ..store.settings import effective_settings

    """The global settings file, then the workspace's project file (`global` and labels have none)."""
    return effective_settings([workspace] if workspace and os.path.isabs(workspace) else [])


def target(args: argparse.Namespace, *, editor_setting: str | None = None) -> Target:
    """--root (else KIN_MEMORY_DIR, the global memory_dir, ~/.kin/memory) and --workspace (else the git
    top level or realpath of the current directory when it is outside the store)."""
    from ..store.root import resolve_root

    choice = resolve_root(getattr(args, "root", None), editor_setting=editor_setting)
    return Target(choice, workspace_flag(getattr(args, "workspace", None), choice.path))


def workspace_flag(value: str | None, root: Path) -> str | None:
    """`--workspace`: an absolute path, `global`, `none` or a label taken verbatim (never a path relative
    to the current directory); without it, the current repository (see cli_workspace)."""
    from ..store.workspace import WorkspaceValueError, cli_workspace

    try:
        return cli_workspace(value, root)
    except WorkspaceValueError as exc:
        raise UsageError(flag_sentence("--workspace", str(exc))) from None


def flag_sentence(flag: str, sentence: str) -> str:
    """A sentence about a flag in the command line's style: "--workspace: the workspace … is …"."""
    return f"{flag}: {sentence[:1].lower()}{sentence[1:].rstrip('.')}"


def file_uri(path: Path) -> str:
    """The URI the language server gives the same file."""
    from pygls.uris import from_fs_path  # light: no lsprotocol

    return from_fs_path(str(path)) or path.as_uri()


def print_json(result: object) -> None:
    """A protocol result exactly as the language server answers it (hostile characters \\u-escaped:
    the same data, and nothing a terminal would act on)."""
    from .. import protocol

    print(terminal.json_text(json.dumps(protocol.dump(result), ensure_ascii=False)))


def memory_vpath(root: Path, arg: str) -> str:
    """A memory named on the command line as `check` and `tool` take it: its virtual path (/memories/…),
    its file's path (absolute, or from here when that file is in the store), or its path in the store
    (facts/db.md). UsageError for a file outside the store."""
    from ..store.paths import virtual_path
    from ..store.root import VIRTUAL_ROOT

    if arg == VIRTUAL_ROOT or arg.startswith(f"{VIRTUAL_ROOT}/"):
        return arg
    real_root = Path(os.path.realpath(root))
    expanded = os.path.expanduser(arg)
    here = Path(os.path.abspath(expanded))
    if os.path.isabs(expanded) or os.path.exists(here):
        try:
            return virtual_path(real_root, Path(os.path.realpath(here)))
        except ValueError:
            if os.path.isabs(expanded):
                raise UsageError(
                    f"{arg} is not a memory of the store at {real_root}: it is not inside the store"
                ) from None
    return f"{VIRTUAL_ROOT}/{arg.strip('/')}" if arg.strip("/") else VIRTUAL_ROOT
