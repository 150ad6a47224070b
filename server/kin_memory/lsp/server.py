"""The language server shell: translates store findings and commands to LSP; owns no domain logic."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path

from .. import __version__
from ..findings.model import Context, Finding
from ..findings.run import check_memory, check_store
from ..store.lifecycle import Thresholds
from ..store.paths import relative_parts
from ..store.prompt_block import compose
from ..store.root import resolve_root
from ..store.store import Store
from ..store.workspace import active_workspaces
from . import convert

log = logging.getLogger("kin_memory.lsp")


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(os.path.abspath(unquote(parsed.path)))


class KinMemoryServer(LanguageServer):
    def __init__(self, root: str | None = None, workspace: str | None = None) -> None:
        super().__init__("kin-memory", __version__)
        self.cli_root = root
        self.cli_workspace = workspace
        self.root: Path = resolve_root(root).path
        self.store = Store(self.root)
        self.folders: list[str] = []
        self.config: dict = {}
        self.ready = threading.Event()
        self.published: set[str] = set()
        self.watcher_stop = threading.Event()

    # -- context -------------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16

    def context(self) -> Context:
        cfg = self.config
        override = cfg.get("workspace") or self.cli_workspace
        active = active_workspaces(self.folders, self.root, override if isinstance(override, str) else None)
        t = Thresholds(stale_days=_num(cfg.get("staleDays"), 180), episodic_days=_num(cfg.get("episodicDays"), 42),
                       session_hours=_num(cfg.get("sessionHours"), 24))
        severity = {k: v for k, v in (cfg.get("severity") or {}).items() if isinstance(v, str)} if isinstance(cfg.get("severity"), dict) else {}
        return Context(root=self.root, active=active, now=time.time(), thresholds=t, severity=severity)

    def apply_config(self, value: object) -> None:
        if isinstance(value, dict):
            section = value.get("kinMemory", value)
            self.config = section if isinstance(section, dict) else {}
        root_setting = self.config.get("memoryDir")
        new_root = resolve_root(self.cli_root, editor_setting=root_setting if isinstance(root_setting, str) else None).path
        if new_root != self.root:
            self.root = new_root
            self.store = Store(new_root)

    def vpath_of(self, uri: str) -> str | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        parts = relative_parts(self.root, path)
        if parts is None:
            real = Path(os.path.realpath(path))
            parts = relative_parts(self.root, real)
        if parts is None or any(p.startswith(".") for p in parts) or not parts or not parts[-1].endswith(".md"):
            return None
        return "/memories/" + "/".join(parts)

    def uri_of(self, vpath: str) -> str:
        return from_fs_path(str(self.root / vpath[len("/memories/"):])) or ""

    # -- diagnostics ---------------------------------------------------------------------------
    def publish(self, vpath: str, findings: list[Finding]) -> None:
        memory = self.store.get(vpath)
        lines = memory.lines if memory else ()
        uri = self.uri_of(vpath)
        if not findings and vpath not in self.published:
            return
        diags = [convert.diagnostic_json(f, lines, self.encoding, self.uri_of) for f in findings]
        if findings:
            self.published.add(vpath)
        else:
            self.published.discard(vpath)
        doc = self.workspace.text_documents.get(uri)
        # Plain JSON-ready dicts sent as-is: converting thousands of attrs objects through cattrs at
        # startup dominated cold start (pygls's typed notify() would re-structure them).
        params = {"uri": uri, "diagnostics": diags, **({"version": doc.version} if doc else {})}
        self.protocol._send_data({"jsonrpc": "2.0", "method": lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, "params": params})

    def publish_all(self) -> None:
        results = check_store(self.store, self.context())
        for vpath in list(self.published):
            if vpath not in results:
                self.publish(vpath, [])
        for vpath, findings in results.items():
            self.publish(vpath, findings)

    def recheck(self, vpath: str) -> None:
        """Recompute one file, and MEMORY.md when the listing may have changed."""
        ctx = self.context()
        memory = self.store.get(vpath)
        if memory is None:
            self.publish(vpath, [])
        elif not memory.is_index:
            self.publish(vpath, check_memory(memory, ctx))
        index = self.store.index_file()
        if index is not None:
            memories = list(self.store.memories())
            block = compose(memories, index, ctx.active)
            self.publish(index.vpath, check_memory(index, ctx, block=block, known={m.vpath for m in memories}))

    def findings_for(self, vpath: str) -> list[Finding]:
        memory = self.store.get(vpath)
        if memory is None:
            return []
        ctx = self.context()
        if memory.is_index:
            memories = list(self.store.memories())
            return check_memory(memory, ctx, block=compose(memories, memory, ctx.active), known={m.vpath for m in memories})
        return check_memory(memory, ctx)


def _num(value: object, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else default


# Feature modules, each exposing register(server). One module per concern keeps the LSP shell thin;
# a module not present in this build is skipped (the same pattern as the CLI's subcommands).
FEATURE_MODULES = (
    "kin_memory.lsp.features",
    "kin_memory.lsp.recall_features",
    "kin_memory.lsp.tool_features",
    "kin_memory.lsp.reflect_features",
)


def create_server(root: str | None = None, workspace: str | None = None) -> KinMemoryServer:
    import importlib

    server = KinMemoryServer(root, workspace)
    for name in FEATURE_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(server)
    return server
