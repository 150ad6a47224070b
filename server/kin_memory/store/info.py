"""What the product knows about its store: the root and how it was found, the settings files, the index.

The language server (`kin.memory.info`) and the CLI (`kin-memory info`) answer from here, so the editor
plugins never resolve the store themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import __version__
from ..protocol import IndexState, InfoResult, SettingsFileInfo
from .root import RootChoice
from .settings import EffectiveSettings


def settings_files(settings: EffectiveSettings) -> list[SettingsFileInfo]:
    """The global file first, then one project file per active workspace."""
    return [
        SettingsFileInfo(
            path=str(f.path),
            scope="global" if n == 0 else "project",
            exists=f.exists,
            problems=len(f.problems),
        )
        for n, f in enumerate(settings.files)
    ]


def store_info(
    choice: RootChoice, active: Sequence[str], settings: EffectiveSettings, index: IndexState
) -> InfoResult:
    return InfoResult(
        root=str(choice.path),
        root_source=choice.source,
        workspaces=list(active),
        version=__version__,
        settings_files=settings_files(settings),
        index_state=index,
        memory_enabled=settings.memory_enabled,
    )
