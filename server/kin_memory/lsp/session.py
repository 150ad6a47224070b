"""What one editor session knows: the store, the folders, the typed settings, the client's capabilities.

Features receive the session as an explicit dependency; the server object itself holds none of this.
Store change events survive a root change: every Store the session makes shares its event bus.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..editor_settings import SettingProblem, Settings, parse_settings
from ..store.context import Context
from ..store.events import StoreEvents
from ..store.lifecycle import Thresholds
from ..store.paths import real_path, relative_parts, virtual_of_rel
from ..store.root import RootChoice, resolve_root
from ..store.settings import (
    EffectiveSettings,
    effective_settings,
    global_settings_path,
    project_settings_path,
)
from ..store.store import Store
from ..store.workspace import active_workspaces
from .uris import path_to_uri, plain_uri, root_uri

# How long the active workspaces are reused: finding them stats and reads each folder's `.git` (a
# worktree names its main tree), which every hover and search asks for.
ACTIVE_TTL = 1.0  # seconds
# A memory's path below the root made only of characters a URI keeps as they are, with no "." or ".."
# component (a Path would drop or keep them differently than a string join).
VSCODE_CLIENTS = ("visual studio code", "code - oss", "code-server", "vscodium", "cursor")
SETTINGS_SECTION = "kinMemory"  # what the server asks the client for (workspace/configuration)
CONFIG_TIMEOUT = 5.0  # seconds the client gets to answer that request


def settings_of(result: object) -> dict:
    """The client's settings from its answer to workspace/configuration ({} when it has none)."""
    first = result[0] if isinstance(result, list) and result else None
    return first if isinstance(first, dict) else {}


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if "\x00" in path:  # no file has such a name; os functions would raise on it
        return None
    return Path(os.path.abspath(path))


class Session:
    def __init__(self, root: str | None = None, workspace: str | None = None) -> None:
        self.cli_root = root
        self.cli_workspace = workspace
        self.root_choice: RootChoice = resolve_root(root)
        self.events = StoreEvents()
        self.store = Store(self.root, events=self.events)
        self.folders: list[str] = []
        self.settings = Settings()
        # lsprotocol's ClientCapabilities once `initialize` is handled; before, the start-up front's view
        # of the client's raw JSON (see startup/front.py): the session is made before the LSP stack loads.
        self.capabilities: object = None
        self.client_name = ""
        self.encoding = "utf-16"
        self.ready = threading.Event()  # the startup load is complete
        self._uris: dict[tuple[Path, str], str] = {}  # paths that need quoting
        self._root_uri: tuple[Path, str] | None = None
        self.root_listeners: list[Callable[[], None]] = []
        self._file_settings: tuple[object, EffectiveSettings] | None = None
        self._active: tuple[object, float, tuple[str, ...]] | None = None
        # Store-wide proposals this session made itself (fix all, restamp): applied in the operator's view,
        # since they fix other workspaces' memories on purpose. Any other proposal (one read from the
        # hidden folder, where anything can be planted) is applied as the active workspaces see the store.
        self.operator_proposals: set[str] = set()

    @property
    def root(self) -> Path:
        return self.root_choice.path

    # -- initialize -------------------------------------------------------------------------------
    def take_initialize(self, params: dict, encoding: str) -> object:
        """What the server takes from `initialize` (its params as JSON, the position encoding agreed):
        the folders, the client's name, the encoding; returns the initialization options, the settings
        to apply until the client's own are pulled. The one reading of these params, whoever answered."""
        folders = params.get("workspaceFolders")
        uris = [f.get("uri") for f in folders if isinstance(f, dict)] if isinstance(folders, list) else []
        if not uris and isinstance(params.get("rootUri"), str):
            uris = [params["rootUri"]]
        self.folders = [str(p) for p in (uri_to_path(u) for u in uris if isinstance(u, str)) if p]
        info = params.get("clientInfo")
        self.client_name = str(info.get("name") or "") if isinstance(info, dict) else ""
        self.encoding = encoding
        return params.get("initializationOptions") or {}

    # -- settings ---------------------------------------------------------------------------------
    def apply_settings(self, raw: object) -> list[SettingProblem]:
        """Take the client's `kinMemory` section (or an object holding it); returns what was invalid."""
        if isinstance(raw, dict) and isinstance(raw.get("kinMemory"), dict):
            raw = raw["kinMemory"]
        self.settings, problems = parse_settings(raw)
        choice = resolve_root(self.cli_root, editor_setting=self.settings.memory_dir)
        moved = choice.path != self.root
        self.root_choice = choice
        if moved:
            self.store = Store(choice.path, events=self.events)
            for listener in self.root_listeners:
                listener()
        return problems

    def setting_label(self, key: str) -> str:
        """A setting's name as the user's editor spells it (no VS Code names inside Neovim)."""
        if self.client_name.lower().startswith(VSCODE_CLIENTS):
            return f"kinMemory.{key}"
        if "neovim" in self.client_name.lower() or self.client_name.lower() == "nvim":
            return f"settings.{key} (in require('kin_memory').setup)"
        return f"kinMemory.{key}"

    # -- context ----------------------------------------------------------------------------------
    def active(self) -> tuple[str, ...]:
        override = self.settings.workspace or self.cli_workspace
        key = (tuple(self.folders), self.root, override)
        now = time.monotonic()
        cached = self._active
        if cached is not None and cached[0] == key and now - cached[1] < ACTIVE_TTL:
            return cached[2]
        value = active_workspaces(self.folders, self.root, override)
        self._active = (key, now, value)
        return value

    def forget_active(self) -> None:
        """Compute the active workspaces afresh at the next ask: a sync may have brought another
        machine's file mapping a repository open here."""
        self._active = None

    def context(self) -> Context:
        s = self.settings
        return Context(
            root=self.root,
            active=self.active(),
            now=time.time(),
            thresholds=Thresholds(
                stale_days=s.stale_days, episodic_days=s.episodic_days, session_hours=s.session_hours
            ),
            severity=dict(s.severity),
        )

    def semantic_wanted(self) -> bool:
        """`recall.semantic` from the editor, and `recall_semantic` in the user's settings file: the
        semantic layer is on when neither turns it off."""
        return self.settings.recall.semantic == "on" and self.file_settings().recall_semantic

    def file_settings(self) -> EffectiveSettings:
        """The settings files in effect: the global one, then each active workspace's project file.

        Asked on every hover and search (memory may be disabled): re-read only when one of the files
        changed (a stat each), so the hot path pays microseconds, not a TOML parse."""
        workspaces = [w for w in self.active() if os.path.isabs(w)]
        paths = [global_settings_path(), *(project_settings_path(w) for w in workspaces)]
        key = (tuple(workspaces), tuple(_stat_key(p) for p in paths), os.environ.get("KIN_MEMORY_REFLECT"),
               os.environ.get("KIN_RECALL_SEMANTIC"))  # fmt: skip
        cached = self._file_settings
        if cached is None or cached[0] != key:
            cached = self._file_settings = (key, effective_settings(workspaces))
        return cached[1]

    def has_capability(self, *path: str) -> bool:
        """Whether a nested client capability is present and truthy, e.g. ("window", "work_done_progress")."""
        node: object = self.capabilities
        for name in path:
            node = getattr(node, name, None)
            if node is None:
                return False
        return bool(node)

    # -- paths ------------------------------------------------------------------------------------
    def vpath_of(self, uri: str) -> str | None:
        """The memory's virtual path, or None for anything that is not a memory file of this store."""
        path = uri_to_path(uri)
        if path is None:
            return None
        parts = relative_parts(self.root, path)
        if parts is None:
            parts = relative_parts(self.root, Path(os.path.realpath(path)))
        if not parts or any(p.startswith(".") for p in parts) or not parts[-1].endswith(".md"):
            return None
        return virtual_of_rel("/".join(parts))

    def uri_of(self, vpath: str) -> str:
        fast = self._plain_uri(vpath)
        if fast is not None:
            return fast
        key = (self.root, vpath)
        uri = self._uris.get(key)
        if uri is None:
            uri = self._uris[key] = path_to_uri(self.path_of(vpath))
        return uri

    def _plain_uri(self, vpath: str) -> str | None:
        """The URI of a memory whose path needs no quoting, by joining strings: what path_to_uri makes of
        it, for a fraction of the cost (a start publishes tens of thousands). None for any other path."""
        root = self.root
        if self._root_uri is None or self._root_uri[0] != root:
            self._root_uri = (root, root_uri(root))
        return plain_uri(self._root_uri[1], vpath)

    def path_of(self, vpath: str) -> Path:
        return real_path(self.root, vpath)


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
