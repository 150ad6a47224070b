"""LSP feature handlers, registered on the server. Each is a thin translation over the core."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..store.categories import CATEGORIES, DESCRIPTIONS
from ..store.lifecycle import lifecycle
from ..store.workspace import visibility
from . import convert
from .hovers import frontmatter_hover
from .server import KinMemoryServer, uri_to_path

log = logging.getLogger("kin_memory.lsp")


def register(server: KinMemoryServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: KinMemoryServer, params: lsp.InitializeParams) -> None:
        folders = [f.uri for f in (params.workspace_folders or [])]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        ls.folders = [str(p) for p in (uri_to_path(u) for u in folders) if p]
        ls.apply_config(params.initialization_options or {})
        ls.client_caps = params.capabilities

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: KinMemoryServer, params: lsp.InitializedParams) -> None:
        caps = ls.client_caps
        if caps.workspace and caps.workspace.configuration:
            try:
                result = await asyncio.wait_for(
                    ls.workspace_configuration_async(
                        lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="kinMemory")])
                    ),
                    5,
                )
                if result and isinstance(result[0], dict):
                    ls.apply_config(result[0])
            except Exception as exc:  # noqa: BLE001 - a client without settings is fine
                log.info("workspace/configuration failed: %s", exc)
        await startup(ls)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: KinMemoryServer, params: lsp.DidChangeConfigurationParams) -> None:
        if isinstance(params.settings, dict) and params.settings:
            ls.apply_config(params.settings)
        await asyncio.get_running_loop().run_in_executor(None, ls.store.load_all)
        ls.publish_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: KinMemoryServer, params: lsp.DidOpenTextDocumentParams) -> None:
        sync_buffer(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: KinMemoryServer, params: lsp.DidChangeTextDocumentParams) -> None:
        sync_buffer(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: KinMemoryServer, params: lsp.DidSaveTextDocumentParams) -> None:
        sync_buffer(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: KinMemoryServer, params: lsp.DidCloseTextDocumentParams) -> None:
        vpath = ls.vpath_of(params.text_document.uri)
        path = uri_to_path(params.text_document.uri)
        if vpath and path:
            ls.store.drop_overlay(vpath)
            ls.store.refresh_path(path)
            ls.recheck(vpath)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: KinMemoryServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = uri_to_path(change.uri)
            if path:
                external_change(ls, path)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix])
    )
    def code_action(ls: KinMemoryServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        vpath = ls.vpath_of(uri)
        memory = ls.store.get(vpath) if vpath else None
        if memory is None:
            return []
        doc = ls.workspace.text_documents.get(uri)
        version = doc.version if doc else None
        actions = []
        for f in ls.findings_for(vpath):
            diag = convert.to_diagnostic(f, memory.lines, ls.encoding, ls.uri_of)
            if not _overlaps(diag.range, params.range):
                continue
            actions += [
                convert.fix_to_action(fix, f, diag, uri, version, memory.lines, ls.encoding)
                for fix in f.fixes
            ]
        return actions

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: KinMemoryServer, params: lsp.HoverParams) -> lsp.Hover | None:
        vpath = ls.vpath_of(params.text_document.uri)
        memory = ls.store.get(vpath) if vpath else None
        if memory is None or memory.is_index:
            return None
        n = params.position.line
        line = memory.lines[n] if 0 <= n < len(memory.lines) else ""
        col = convert.col_from_client(line, params.position.character, ls.encoding)
        text = frontmatter_hover(memory, n, col, ls.context())
        if (
            text is None
            and ls.body_hover is not None
            and memory.body_line <= n < len(memory.lines)
            and line.strip()
        ):
            # Recall runs in a worker thread: the loop keeps serving keystrokes meanwhile.
            text = await asyncio.get_running_loop().run_in_executor(
                ls.query_pool, ls.body_hover, memory, n, col
            )
        if text is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[":", " "]))
    def completion(ls: KinMemoryServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        vpath = ls.vpath_of(params.text_document.uri)
        memory = ls.store.get(vpath) if vpath else None
        if memory is None or memory.frontmatter.status not in ("ok", "yaml_error", "unclosed"):
            return None
        n = params.position.line
        close = memory.frontmatter.close_line if memory.frontmatter.close_line > 0 else len(memory.lines)
        if not (0 < n < close):
            return None
        line = memory.lines[n]
        col = convert.col_from_client(line, params.position.character, ls.encoding)
        head = line[:col]
        ctx = ls.context()
        t = ctx.thresholds
        items: list[lsp.CompletionItem] = []
        if head.startswith("category:"):
            for c in CATEGORIES:
                items.append(
                    lsp.CompletionItem(
                        label=c,
                        kind=lsp.CompletionItemKind.EnumMember,
                        documentation=DESCRIPTIONS[c].format(
                            stale=int(t.stale_days),
                            episodic=int(t.episodic_days),
                            session=int(t.session_hours),
                        ),
                    )
                )
        elif head.startswith("workspace:"):
            values = [*ctx.active, "global"]
            for m in ls.store.memories():
                if isinstance(m.stamp, str) and m.stamp not in values and len(values) < 200:
                    values.append(m.stamp)
            items = [
                lsp.CompletionItem(
                    label=v,
                    kind=lsp.CompletionItemKind.Folder if v.startswith("/") else lsp.CompletionItemKind.Value,
                    detail="active workspace" if v in ctx.active else None,
                )
                for v in values
            ]
        elif ":" not in head:
            present = set(memory.frontmatter.keys)
            for key, doc in (
                ("category", "what kind of memory this is: drives indexing and expiry"),
                ("workspace", "the repository realpath this memory belongs to, `global`, or a label"),
            ):
                if key not in present:
                    items.append(
                        lsp.CompletionItem(
                            label=key,
                            kind=lsp.CompletionItemKind.Property,
                            insert_text=f"{key}: ",
                            documentation=doc,
                        )
                    )
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: KinMemoryServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        vpath = ls.vpath_of(params.text_document.uri)
        memory = ls.store.get(vpath) if vpath else None
        if memory is None or memory.is_index:
            return []
        ctx = ls.context()
        life = lifecycle(memory.category, memory.mtime, ctx.now, ctx.thresholds)
        vis = visibility(memory.stamp, ctx.active)
        title = f"{memory.category} · {vis.scope} · {life.label}"
        rng = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
        lenses = [lsp.CodeLens(range=rng, command=lsp.Command(title=title, command=""))]
        if life.status == "stale":
            lenses.append(
                lsp.CodeLens(
                    range=rng,
                    command=lsp.Command(
                        title="Mark reviewed",
                        command="kin.memory.markReviewed",
                        arguments=[{"uri": params.text_document.uri}],
                    ),
                )
            )
        return lenses

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: KinMemoryServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        vpath = ls.vpath_of(params.text_document.uri)
        memory = ls.store.get(vpath) if vpath else None
        if memory is None:
            return []
        out = []
        for e in memory.frontmatter.entries:
            rng = convert.to_range(e.key_span, memory.lines, ls.encoding)
            out.append(
                lsp.DocumentSymbol(
                    name=e.key,
                    kind=lsp.SymbolKind.Property,
                    range=rng,
                    selection_range=rng,
                    detail=e.raw or None,
                )
            )
        for n, line in enumerate(memory.lines[memory.body_line :], memory.body_line):
            if line.startswith("#"):
                name = line.lstrip("#").strip() or "(heading)"
                rng = convert.to_range(convert.Span(n, 0, n, len(line)), memory.lines, ls.encoding)
                out.append(
                    lsp.DocumentSymbol(name=name, kind=lsp.SymbolKind.String, range=rng, selection_range=rng)
                )
        return out

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_LINK)
    def document_link(ls: KinMemoryServer, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
        from ..findings.budget import link_targets

        vpath = ls.vpath_of(params.text_document.uri)
        memory = ls.store.get(vpath) if vpath else None
        if memory is None or not memory.is_index:
            return []
        links = []
        for n, start, end, target in link_targets(memory):
            if target and ls.store.get(target):
                rng = convert.to_range(convert.Span(n, start, n, end), memory.lines, ls.encoding)
                links.append(lsp.DocumentLink(range=rng, target=ls.uri_of(target)))
        return links

    @server.command("kin.memory.markReviewed")
    def mark_reviewed(ls: KinMemoryServer, args: dict) -> dict:
        uri = args.get("uri") if isinstance(args, dict) else None
        if not isinstance(uri, str):
            from pygls.exceptions import JsonRpcInvalidParams

            raise JsonRpcInvalidParams("missing required key: uri")
        vpath = ls.vpath_of(uri)
        path = uri_to_path(uri)
        if not vpath or path is None:
            raise ValueError("not a memory file of this store")
        from ..tool.review import ReviewError, mark_reviewed

        try:
            mark_reviewed(ls.root, vpath)  # through the tool's guard: never touches a file outside the store
        except ReviewError as exc:
            raise ValueError(str(exc)) from None
        ls.store.refresh_path(path)
        with ls.store.lock:
            overlay = ls.store.overlays.get(vpath)
        if overlay is not None:  # an open buffer: its lifecycle follows the file's new mtime
            try:
                ls.store.set_overlay(path, overlay.text, path.stat().st_mtime)
            except OSError:
                pass
        ls.recheck(vpath)
        return {"ok": True}

    @server.command("kin.memory.list")
    async def list_memories(ls: KinMemoryServer, *args: Any) -> dict:
        # Before the startup load completes the store is partial: answer with the whole of it.
        await asyncio.get_running_loop().run_in_executor(None, ls.ready.wait, 120)
        ctx = ls.context()
        out = []
        for m in sorted(ls.store.memories(), key=lambda m: m.vpath):
            life = lifecycle(m.category, m.mtime, ctx.now, ctx.thresholds)
            vis = visibility(m.stamp, ctx.active)
            out.append(
                {
                    "path": m.vpath,
                    "uri": ls.uri_of(m.vpath),
                    "category": m.category,
                    "workspace": m.stamp if isinstance(m.stamp, str) else None,
                    "visible": vis.visible,
                    "ageDays": round(life.age_days, 2),
                    "status": life.status,
                }
            )
        return {"memories": out}


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return not (key(a.end) < key(b.start) or key(b.end) < key(a.start))


def sync_buffer(ls: KinMemoryServer, uri: str) -> None:
    vpath = ls.vpath_of(uri)
    path = uri_to_path(uri)
    if not vpath or path is None:
        return
    doc = ls.workspace.get_text_document(uri)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = time.time()
    ls.store.set_overlay(path, doc.source, mtime)
    ls.recheck(vpath)


def external_change(ls: KinMemoryServer, path: Path) -> None:
    vpath = ls.vpath_of(from_path(path))
    if vpath is None:
        if path.is_dir() or not path.exists():
            # A folder created/removed/renamed: rescan, cheap enough and always correct.
            ls.store.load_all()
            ls.publish_all()
        return
    ls.store.refresh_path(path)
    if ls.workspace.text_documents.get(ls.uri_of(vpath)) is None:
        ls.store.drop_overlay(vpath)
    ls.recheck(vpath)


def from_path(path: Path) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(str(path)) or ""


async def startup(ls: KinMemoryServer) -> None:
    token = "kin-memory-startup"
    progress = False
    caps = ls.client_caps
    if caps.window and caps.window.work_done_progress:
        try:
            await asyncio.wait_for(ls.work_done_progress.create_async(token), 5)
            ls.work_done_progress.begin(
                token, lsp.WorkDoneProgressBegin(title="kin-memory", message="loading the store")
            )
            progress = True
        except Exception:  # noqa: BLE001
            progress = False
    loop = asyncio.get_running_loop()
    started = time.perf_counter()
    # Watch from the start: changes seen while the store loads are held and applied once it is
    # loaded (applied earlier, the load's snapshot could overwrite them).
    start_watcher(ls, loop)
    results = await loop.run_in_executor(None, ls.shard_results)
    if results is not None:
        count = ls.send_shard_results(results)
        log_checked(ls, count, started, f" by {len(results)} worker processes")
        await loop.run_in_executor(None, lambda: ls.store.load_all(compact=True))
        ls.reconcile(results)
    else:

        def load_and_check() -> tuple[bytes, set[str]]:
            ls.store.load_all()
            return ls.store_frames()

        # Parsing, checking and JSON framing all run off the event loop; the loop only writes the bytes.
        ls.send_store_frames(*await loop.run_in_executor(None, load_and_check))
        count = sum(1 for _ in ls.store.memories())
        log_checked(ls, count, started)
    # What the startup load built lives as long as the server: taken out of the collector's view,
    # later collections no longer walk 100k memories in the middle of a keystroke.
    gc.collect()
    gc.freeze()
    ls.ready.set()
    held, ls.held_changes = ls.held_changes, set()
    if held:
        _apply_changes(ls, held)
    for hook in ls.ready_hooks:
        try:
            hook()
        except Exception as exc:  # noqa: BLE001 - an extension failing must not stop the server
            log.warning("ready hook failed: %r", exc)
    if progress:
        ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message=f"{count} memories checked"))


def log_checked(ls: KinMemoryServer, count: int, started: float, how: str = "") -> None:
    seconds = time.perf_counter() - started
    ls.window_log_message(
        lsp.LogMessageParams(
            type=lsp.MessageType.Info,
            message=f"kin-memory: {count} memories in {ls.root} checked in {seconds:.2f}s{how}",
        )
    )


def start_watcher(ls: KinMemoryServer, loop: asyncio.AbstractEventLoop) -> None:
    """Our own watcher (watchfiles, in a thread): Neovim offers no dynamic file-watch registration.

    A watch is bound to the store folder's inode: when the folder is removed (or replaced, or the root
    setting moves it) the watch goes deaf, so it is re-armed on the folder that is there now, waiting
    for it to come back, and the store is rescanned once the new watch runs."""

    def run() -> None:
        try:
            from watchfiles import watch
        except ImportError:
            return
        rearmed = False
        while not ls.watcher_stop.is_set():
            root = ls.root
            ident = _folder_identity(root)
            if ident is None:  # no store folder (yet, or any more): look again shortly
                ls.watcher_stop.wait(0.25)
                continue
            try:
                for changes in watch(
                    root,
                    stop_event=ls.watcher_stop,
                    debounce=50,
                    step=20,
                    rust_timeout=500,
                    yield_on_timeout=True,
                    raise_interrupt=False,
                ):
                    if rearmed:  # the new watch is live: whatever appeared meanwhile is picked up now
                        rearmed = False
                        loop.call_soon_threadsafe(_rescan, ls)
                    paths = {
                        Path(p)
                        for _, p in changes
                        if not any(part.startswith(".") for part in Path(p).relative_to(root).parts)
                    }
                    if paths:
                        loop.call_soon_threadsafe(_apply_changes, ls, paths)
                    if _folder_identity(root) != ident or ls.root != root:
                        loop.call_soon_threadsafe(_rescan, ls)  # gone or replaced: what it held is gone
                        break
            except Exception as exc:  # noqa: BLE001 - the watcher failed: log, retry, keep serving
                log.warning("file watcher stopped: %s", exc)
                ls.watcher_stop.wait(1.0)
            rearmed = True

    threading.Thread(target=run, name="kin-memory-watch", daemon=True).start()


def _folder_identity(path: Path) -> tuple[int, int] | None:
    import os
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _rescan(ls: KinMemoryServer) -> None:
    try:
        ls.store.load_all()
        ls.publish_all()
    except Exception as exc:  # noqa: BLE001
        log.warning("could not rescan the store: %s", exc)


def _apply_changes(ls: KinMemoryServer, paths: set[Path]) -> None:
    if not ls.ready.is_set():
        ls.held_changes |= paths
        return
    for path in sorted(paths):
        try:
            external_change(ls, path)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not process change of %s: %s", path.name, exc)
