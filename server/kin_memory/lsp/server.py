"""The language server shell: translates store findings and commands to LSP; owns no domain logic."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
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
from ..store.prompt_block import compose, compose_from, listing_line
from ..store.root import resolve_root
from ..store.store import Store
from ..store.workspace import active_workspaces
from . import frames

log = logging.getLogger("kin_memory.lsp")
_UNSEEN = object()


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if "\x00" in path:  # no file has such a name; os functions would raise on it
        return None
    return Path(os.path.abspath(path))


class KinMemoryServer(LanguageServer):
    def __init__(self, root: str | None = None, workspace: str | None = None) -> None:
        super().__init__("kin-memory", __version__)
        self.cli_root = root
        self.cli_workspace = workspace
        choice = resolve_root(root)
        self.root: Path = choice.path
        self.root_source = choice.source
        self.store = Store(self.root)
        self.folders: list[str] = []
        self.config: dict = {}
        self.ready = threading.Event()
        self.published: set[str] = set()
        self.watcher_stop = threading.Event()
        self._uris: dict[tuple[Path, str], str] = {}
        self._listing: dict[str, object] = {}  # vpath -> listing entry last seen (see recheck)
        self._index_timer: asyncio.TimerHandle | None = None
        self.shards = None  # cold-start workers forked by `kin-memory serve` (preload.Shards)
        # Feature modules extend the shell without it knowing them: hooks run after each recheck
        # (recall keeps its index in step), and findings computed elsewhere (KM601, from recall)
        # are published together with the file's own.
        self.recheck_hooks: list[Callable[[str, object], None]] = []
        self.ready_hooks: list[Callable[[], None]] = []
        self.extra_findings: dict[str, list[Finding]] = {}
        self.held_changes: set[Path] = set()  # file changes seen before the startup load completed
        self.body_hover: Callable[[object, int, int], str | None] | None = None  # set by recall
        self.query_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kin-memory-query")

    def report_server_error(self, error: Exception, source: type) -> None:
        """Out-of-band errors (a notification that could not be applied, e.g. didChange of a document
        never opened) are logged, never popped up: the client caused them and nothing awaits an answer.
        Request errors already travel in their response."""
        if getattr(source, "__name__", "") == "FeatureRequestError":
            return
        log.warning("%s: %r", getattr(source, "__name__", "error"), error)
        self.window_log_message(
            lsp.LogMessageParams(
                type=lsp.MessageType.Warning,
                message=f"kin-memory: could not handle a notification: {error!r}",
            )
        )

    # -- context -------------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        """The negotiated position encoding as a plain string ("utf-8", "utf-16", "utf-32")."""
        kind = self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        return getattr(kind, "value", kind)

    def context(self) -> Context:
        cfg = self.config
        override = cfg.get("workspace") or self.cli_workspace
        active = active_workspaces(self.folders, self.root, override if isinstance(override, str) else None)
        t = Thresholds(
            stale_days=_num(cfg.get("staleDays"), 180),
            episodic_days=_num(cfg.get("episodicDays"), 42),
            session_hours=_num(cfg.get("sessionHours"), 24),
        )
        severity = (
            {k: v for k, v in (cfg.get("severity") or {}).items() if isinstance(v, str)}
            if isinstance(cfg.get("severity"), dict)
            else {}
        )
        return Context(root=self.root, active=active, now=time.time(), thresholds=t, severity=severity)

    def apply_config(self, value: object) -> None:
        if isinstance(value, dict):
            section = value.get("kinMemory", value)
            self.config = section if isinstance(section, dict) else {}
        root_setting = self.config.get("memoryDir")
        choice = resolve_root(
            self.cli_root, editor_setting=root_setting if isinstance(root_setting, str) else None
        )
        new_root, self.root_source = choice.path, choice.source
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
        if (
            parts is None
            or any(p.startswith(".") for p in parts)
            or not parts
            or not parts[-1].endswith(".md")
        ):
            return None
        return "/memories/" + "/".join(parts)

    def uri_of(self, vpath: str) -> str:
        key = (self.root, vpath)
        uri = self._uris.get(key)
        if uri is None:
            uri = self._uris[key] = from_fs_path(str(self.root / vpath[len("/memories/") :])) or ""
        return uri

    # -- diagnostics ---------------------------------------------------------------------------
    # Notifications are framed by hand from plain JSON-ready dicts: converting thousands of attrs
    # objects through cattrs (pygls's typed notify) dominated cold start.
    def diagnostics_frame(self, vpath: str, findings: list[Finding], version: int | None = None) -> bytes:
        memory = self.store.get(vpath)
        return frames.diagnostics_frame(
            self.uri_of(vpath), findings, memory.lines if memory else (), self.encoding, self.uri_of, version
        )

    def send_frames(self, data: bytes) -> None:
        """Write pre-framed messages in one go (must run on the event loop thread, like pygls's writes)."""
        writer = self.protocol.writer
        if not data or writer is None:
            return
        res = writer.write(data)
        if inspect.isawaitable(res):
            asyncio.ensure_future(res)

    def publish(self, vpath: str, findings: list[Finding]) -> None:
        # Closed files with nothing to report stay silent (100k empty publishes at startup would
        # flood the client); an open buffer always gets an answer for its version.
        doc = self.workspace.text_documents.get(self.uri_of(vpath))
        if not findings and vpath not in self.published and doc is None:
            return
        if findings:
            self.published.add(vpath)
        else:
            self.published.discard(vpath)
        self.send_frames(self.diagnostics_frame(vpath, findings, doc.version if doc else None))

    def store_frames(self) -> tuple[bytes, set[str]]:
        """Check the whole store and frame every non-empty result (thread-safe: touches no protocol state)."""
        results = check_store(self.store, self.context())
        frames = [self.diagnostics_frame(v, f) for v, f in results.items() if f]
        self.store.compact()  # checked: closed files need no more than their listing entry now
        return b"".join(frames), {v for v, f in results.items() if f}

    def send_store_frames(self, data: bytes, with_findings: set[str]) -> None:
        """Publish a whole-store check computed off the loop; open buffers are rechecked, not overwritten."""
        self.log_scan_problems()
        for vpath in self.published - with_findings:
            self.publish(vpath, [])
        self.published |= with_findings
        self.send_frames(data)
        for uri in list(self.workspace.text_documents):
            vpath = self.vpath_of(uri)
            if vpath:
                self.recheck(vpath)

    # -- cold start from forked shard workers (see preload.py) ---------------------------------
    def shard_results(self) -> list | None:
        """Runs in an executor: the shard workers' checks, if they were started for this root."""
        shards, self.shards = self.shards, None
        if shards is None:
            return None
        if shards.root != self.root:
            shards.close()
            return None
        return shards.collect(self.context(), self.encoding)

    def send_shard_results(self, results: list) -> int:
        """Publish the shards' diagnostics and MEMORY.md's (which needs the merged listing)."""
        with_findings = {v for r in results for v in r.with_findings}
        self.published |= with_findings
        self.send_frames(b"".join(r.frames for r in results))
        index_vpath = next((r.index_vpath for r in results if r.index_vpath), None)
        if index_vpath:
            index = self.store.refresh_path(self.root / index_vpath[len("/memories/") :])[1]
            if index is not None:
                listed = [item for r in results for item in r.listed]
                block = compose_from(listed, sum(r.hidden for r in results), index)
                known = {v for r in results for v in r.stats}
                self.publish(index_vpath, check_memory(index, self.context(), block=block, known=known))
        for r in results:  # sent: at 100k memories these are tens of MB, not worth keeping
            r.frames, r.listed = b"", []
        return sum(len(r.stats) for r in results)

    def reconcile(self, results: list) -> None:
        """After the server's own load: recheck what moved since the shards read it, and open buffers."""
        self.log_scan_problems()  # the shards publish only files: folders named x.md etc. get their reason here
        seen: dict[str, tuple[float, int]] = {}
        for r in results:
            seen.update(r.stats)
        current = {m.vpath: (m.mtime, m.size) for m in self.store.memories()}
        for vpath in set(seen) | set(current):
            if seen.get(vpath) != current.get(vpath):
                self.recheck(vpath)
        for uri in list(self.workspace.text_documents):
            vpath = self.vpath_of(uri)
            if vpath:
                self.recheck(vpath)

    def publish_all(self) -> None:
        self.send_store_frames(*self.store_frames())

    def log_scan_problems(self) -> None:
        """Entries the scan skipped (a folder named x.md, a symlink out of the store) have no document to
        carry a diagnostic: each gets a logged reason, once."""
        logged = self.__dict__.setdefault("_logged_problems", set())
        for problem in self.store.problems:
            if (problem.vpath, problem.reason) not in logged:
                logged.add((problem.vpath, problem.reason))
                self.window_log_message(
                    lsp.LogMessageParams(
                        type=lsp.MessageType.Warning, message=f"kin-memory: {problem.vpath}: {problem.reason}"
                    )
                )

    def recheck(self, vpath: str) -> None:
        """Recompute one file now; MEMORY.md (which depends on the whole listing) only when this file's
        listing entry changed, debounced and off the loop: at 100k memories composing the prompt block
        costs far more than a keystroke may."""
        memory = self.store.get(vpath)
        if memory is None:
            self.extra_findings.pop(vpath, None)
            self.publish(vpath, [])
        elif not memory.is_index:
            self.publish(vpath, check_memory(memory, self.context()) + self.extra_findings.get(vpath, []))
        if (memory is not None and memory.is_index) or self._listing_changed(vpath, memory):
            self.schedule_index_check()
        for hook in self.recheck_hooks:
            try:
                hook(vpath, memory)
            except Exception as exc:  # noqa: BLE001 - an extension failing must not stop diagnostics
                log.warning("recheck hook failed for %s: %r", vpath, exc)

    def set_extra_findings(self, vpath: str, findings: list[Finding]) -> None:
        """Replace the findings another feature computed for vpath and republish when they changed."""
        if self.extra_findings.get(vpath, []) == findings:
            return
        if findings:
            self.extra_findings[vpath] = findings
        else:
            self.extra_findings.pop(vpath, None)
        memory = self.store.get(vpath)
        if memory is not None and not memory.is_index:
            self.publish(vpath, check_memory(memory, self.context()) + findings)

    def _listing_changed(self, vpath: str, memory) -> bool:
        key = (
            None
            if memory is None or memory.is_index
            else (memory.category, memory.stamp, listing_line(memory))
        )
        changed = self._listing.get(vpath, _UNSEEN) != key
        self._listing[vpath] = key
        return changed

    def schedule_index_check(self, delay: float = 0.15) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the loop (a direct call): do it now
            self._publish_index(self._index_findings())
            return
        if self._index_timer is not None:
            self._index_timer.cancel()
        self._index_timer = loop.call_later(delay, self._start_index_check, loop)

    def _start_index_check(self, loop: asyncio.AbstractEventLoop) -> None:
        self._index_timer = None
        future = loop.run_in_executor(None, self._index_findings)
        future.add_done_callback(self._index_done)

    def _index_done(self, future: asyncio.Future) -> None:
        if future.cancelled():
            return
        if future.exception() is not None:
            log.warning("MEMORY.md check failed: %r", future.exception())
            return
        self._publish_index(future.result())

    def _index_findings(self) -> tuple[str, list[Finding]] | None:
        index = self.store.index_file()
        if index is None:
            return None
        ctx = self.context()
        memories = list(self.store.memories())
        return index.vpath, check_memory(
            index, ctx, block=compose(memories, index, ctx.active), known={m.vpath for m in memories}
        )

    def _publish_index(self, result: tuple[str, list[Finding]] | None) -> None:
        if result is not None and self.store.index_file() is not None:
            self.publish(*result)

    def findings_for(self, vpath: str) -> list[Finding]:
        memory = self.store.get(vpath)
        if memory is None:
            return []
        ctx = self.context()
        if memory.is_index:
            memories = list(self.store.memories())
            return check_memory(
                memory, ctx, block=compose(memories, memory, ctx.active), known={m.vpath for m in memories}
            )
        return check_memory(memory, ctx) + self.extra_findings.get(vpath, [])


def _num(value: object, default: float) -> float:
    return (
        float(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
        else default
    )


# Feature modules, each exposing register(server). One module per concern keeps the LSP shell thin;
# a module not present in this build is skipped (the same pattern as the CLI's subcommands).
FEATURE_MODULES = (
    "kin_memory.lsp.features",
    "kin_memory.lsp.recall_features",
    "kin_memory.lsp.tool_features",
    "kin_memory.lsp.sweep_features",
    "kin_memory.lsp.reflect_features",
    "kin_memory.lsp.info_features",
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
