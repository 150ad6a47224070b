"""The memory tool's six commands (reference/memory-tool.md), confined to the store root.

Public entry points (stable; the LSP shell, the CLI and reflection call them):

- ``run(root, workspaces, input, **options) -> {"content": str, "isError": bool}``: one tool call as a
  model emits it (``{"command": "view", "path": "/memories", ...}``) against the store at ``root``.
  ``workspaces`` is the active workspace (a realpath, ``"global"``), a sequence of them (the first one
  stamps new memories), or None (the operator's view: nothing is stamped). Options: ``mode``
  (auto | strict | plan), ``confirm`` (strict mode: ``description -> bool``), ``enabled`` /
  ``disabled_by`` (memory_enabled = false), ``editor`` (an ``Editor`` for files open in an editor).
  Never raises; every failure is an ``isError`` result naming virtual paths only.
- ``run_tool(input, ToolContext) -> ToolResult``: the same with the options in a dataclass.

Every write is a temporary file in the target's directory, fsync, rename: never in place, so a hard-linked
copy of the store (reflection's staging area) is never changed through a shared inode.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kin_memory.store.paths import HIDDEN_DIR, is_memory_rel, virtual_of_rel

from . import audit, messages
from .atomic import DIR_MODE, Changed, create_at, make_dirs, remove_at, rename_at, write_at
from .guard import GuardError, Target, open_dir, open_for_read, read_at, resolve
from .write_rules import apply as apply_write_rules

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
MUTATIONS = ("create", "str_replace", "insert", "delete", "rename")
MODES = ("auto", "strict", "plan")
MAX_LINES = 999_999
SNIPPET_LINES = 2
LOCK_NAME = "tool.lock"


class Editor(Protocol):
    """Files open in an editor: their edits go through the editor so buffer and undo stay in sync."""

    def buffer(self, path: Path) -> tuple[str, object] | None:
        """(text, version) of the open document for this real path, None when it is not open."""

    def apply(self, path: Path, version: object, old_text: str, new_text: str) -> bool:
        """Ask the editor to turn old_text into new_text in its buffer; True when it applied the edit."""


@dataclass
class ToolContext:
    root: Path
    workspace: str | None = None
    mode: str = "auto"
    enabled: bool = True
    disabled_by: str | None = None
    confirm: Callable[[str], bool] | None = None
    editor: Editor | None = None


@dataclass
class ToolResult:
    content: str
    is_error: bool


class _Fail(Exception):
    """A command failure carrying the message shown to the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _before_commit(path: Path) -> None:
    """Hook between reading a file and committing its edit (tests replace it to simulate a race)."""


def _before_write(path: Path) -> None:
    """Hook between the guard's check and a create/delete/rename (tests plant symlinks here)."""


_thread_lock = threading.Lock()


# --------------------------------------------------------------------------- parameters


def _str_param(
    inp: dict, command: str, name: str, *, required: bool = True, default: str | None = None
) -> str:
    if name not in inp or inp[name] is None:
        if required:
            raise _Fail(messages.missing_param(command, name))
        return default if default is not None else ""
    value = inp[name]
    if not isinstance(value, str):
        raise _Fail(messages.bad_param(command, name, "a string"))
    return value


def _int_param(inp: dict, command: str, name: str) -> int:
    if name not in inp or inp[name] is None:
        raise _Fail(messages.missing_param(command, name))
    value = inp[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Fail(messages.bad_param(command, name, "an integer"))
    return value


def _guard(root: Path, vpath: str) -> Target:
    try:
        return resolve(root, vpath)
    except GuardError as exc:
        raise _Fail(exc.message) from None


def _norm_virtual(t: Target) -> str:
    return virtual_of_rel("/".join(t.parts))


# --------------------------------------------------------------------------- formatting


def format_size(n: int) -> str:
    value = float(n)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            if unit == "B":
                return f"{n}B"
            if value == int(value):
                return f"{int(value)}{unit}"
            return f"{value:.1f}{unit}"
        value /= 1024
    raise AssertionError("unreachable")


def number_lines(lines: list[str], start: int) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, start))


def _tree_size(path: str) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False, onerror=lambda e: None):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                if stat.S_ISREG(st.st_mode):
                    total += st.st_size
    return total


def _entry_size(path: str) -> tuple[int, bool] | None:
    """(size, is_dir) for a listing entry, None when it must not be shown (escaping link, special)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return _tree_size(path), True
    if stat.S_ISREG(st.st_mode):
        return st.st_size, False
    return None


def _inside(path: str, root_real: str) -> bool:
    real = os.path.realpath(path)
    if real != root_real and not real.startswith(root_real.rstrip(os.sep) + os.sep):
        return False
    rel = os.path.relpath(real, root_real)
    return rel == "." or not any(c.startswith(".") for c in rel.split(os.sep))


def _children(path: str) -> list[str]:
    try:
        return sorted(n for n in os.listdir(path) if not n.startswith("."))
    except OSError:
        return []


def _listing(t: Target) -> str:
    base = _norm_virtual(t)
    root_real = os.fspath(t.root_real)
    top = os.fspath(t.resolved)
    lines = [messages.dir_header(base)]
    info = _entry_size(top) if os.path.exists(top) else (0, True)
    lines.append(f"{format_size(info[0] if info else 0)}\t{base}")

    def walk(dirpath: str, vbase: str, depth: int) -> None:
        for name in _children(dirpath):
            child = os.path.join(dirpath, name)
            if not _inside(child, root_real):
                continue
            entry = _entry_size(child)
            if entry is None:
                continue
            size, is_dir = entry
            vchild = f"{vbase}/{name}"
            lines.append(f"{format_size(size)}\t{vchild}{'/' if is_dir else ''}")
            if is_dir and depth < 2:
                walk(child, vchild, depth + 1)

    if os.path.isdir(top):
        walk(top, base, 1)
    return "\n".join(lines)


# --------------------------------------------------------------------------- reading / committing


def _map_os_error(exc: OSError, t: Target, what: str, missing: str) -> _Fail:
    if isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOTDIR:
        return _Fail(missing)
    if exc.errno == errno.ELOOP:
        return _Fail(messages.SYMLINK_ESCAPE)
    return _Fail(messages.os_error(t.virtual, what))


def _read_text(t: Target, *, missing: str) -> tuple[str, os.stat_result]:
    try:
        data, st = open_for_read(t)
    except GuardError as exc:
        raise _Fail(exc.message) from None
    except IsADirectoryError:
        raise _Fail(messages.not_a_file(t.virtual)) from None
    except OSError as exc:
        raise _map_os_error(exc, t, "read", missing) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Fail(messages.not_utf8(t.virtual)) from None
    return text, st


@contextlib.contextmanager
def _store_lock(root_real: Path):
    """One writer at a time per store: a thread lock plus an flock in the hidden folder (best effort)."""
    with _thread_lock:
        fd = None
        with contextlib.suppress(Exception):
            index = root_real / HIDDEN_DIR
            if not os.path.lexists(index):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(index, DIR_MODE)
                    os.chmod(index, DIR_MODE)
            fd = os.open(index / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)  # closing releases the flock


def _commit(t: Target, before: os.stat_result, old_text: str, new_text: str, ctx: ToolContext) -> None:
    """Write `new_text` unless the file changed since it was read as `old_text`; through the editor when open."""
    _before_commit(t.resolved)
    place = t.content
    with _store_lock(t.root_real):
        try:
            dir_fd = open_dir(t.root_real, place.dir_parts)
        except GuardError as exc:
            raise _Fail(exc.message) from None
        except OSError as exc:
            raise _Fail(
                messages.vanished(t.virtual)
                if isinstance(exc, FileNotFoundError)
                else messages.os_error(t.virtual, "write")
            ) from None
        try:
            try:
                data, now = read_at(dir_fd, place.name, t.root_real)
            except FileNotFoundError:
                raise _Fail(messages.vanished(t.virtual)) from None
            except GuardError as exc:
                raise _Fail(exc.message) from None
            except OSError:
                raise _Fail(
                    messages.conflict(t.virtual)
                ) from None  # replaced by a link or a folder meanwhile
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (
                before.st_ino,
                before.st_size,
                before.st_mtime_ns,
            ) or data != old_text.encode("utf-8"):
                raise _Fail(messages.conflict(t.virtual))
            _through_editor(t, ctx, old_text, new_text)
            try:
                write_at(dir_fd, place.name, new_text.encode("utf-8"), expect=now)
            except Changed:
                raise _Fail(messages.conflict(t.virtual)) from None
            except OSError:
                raise _Fail(messages.os_error(t.virtual, "write")) from None
        finally:
            os.close(dir_fd)


def _through_editor(t: Target, ctx: ToolContext, old_text: str, new_text: str) -> None:
    """An open document gets the edit as an editor edit (undo works) before the disk write."""
    if ctx.editor is None:
        return
    try:
        open_doc = ctx.editor.buffer(t.resolved)
    except Exception:
        open_doc = None
    if open_doc is None:
        return
    text, version = open_doc
    if text != old_text:  # unsaved changes in the buffer: never clobber them
        raise _Fail(messages.unsaved(t.virtual))
    try:
        applied = ctx.editor.apply(t.resolved, version, old_text, new_text)
    except Exception:
        applied = False
    if not applied:
        raise _Fail(messages.editor_refused(t.virtual))


def _open_place_dir(t: Target, dir_parts: tuple[str, ...], what: str, *, create: bool = False) -> int:
    try:
        return open_dir(t.root_real, dir_parts, create=create)
    except GuardError as exc:
        raise _Fail(exc.message) from None
    except OSError:
        raise _Fail(messages.os_error(t.virtual, what)) from None


# --------------------------------------------------------------------------- commands


def _view(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "view", "path")
    t = _guard(ctx.root, path)
    real = os.fspath(t.resolved)
    if not os.path.lexists(real):
        if t.is_root:
            return _listing(t)
        raise _Fail(messages.not_found(path))
    if os.path.isdir(real):
        return _listing(t)
    if not os.path.isfile(real):
        raise _Fail(messages.unsupported(path))
    view_range = inp.get("view_range")
    if view_range is not None and not (
        isinstance(view_range, (list, tuple))
        and len(view_range) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in view_range)
    ):
        raise _Fail(messages.bad_param("view", "view_range", "[start, end] integers"))
    outcome = "error"
    try:
        text, _ = _read_text(t, missing=messages.not_found(path))
        lines = text.split("\n")
        if len(lines) > MAX_LINES:
            raise _Fail(messages.too_many_lines(path))
        start = 1
        if view_range is not None:
            a, b = view_range
            start = max(1, a)
            lines = lines[start - 1 :] if b == -1 else lines[start - 1 : b]
        outcome = "ok"
        return messages.file_header(path) + "\n" + number_lines(lines, start)
    finally:
        audit.record(t.root_real, "view", [path], outcome)


def _create(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "create", "path")
    text = _str_param(inp, "create", "file_text")
    t = _guard(ctx.root, path)
    _confirm(ctx, "create", path, f"create {path}")
    if t.is_root or os.path.lexists(t.lexical):
        raise _Fail(messages.create_exists(path))
    if is_memory_rel(t.parts):
        text = apply_write_rules(text, ctx.workspace)
    try:
        make_dirs(t.root_real)  # the root itself is trusted; everything below goes through the guard
    except OSError:
        raise _Fail(messages.os_error(path, "create")) from None
    _before_write(t.resolved)
    place = t.content
    dir_fd = _open_place_dir(t, place.dir_parts, "create", create=True)
    try:
        create_at(dir_fd, place.name, text.encode("utf-8"))
    except FileExistsError:
        raise _Fail(messages.create_exists(path)) from None
    except OSError:
        raise _Fail(messages.os_error(path, "create")) from None
    finally:
        os.close(dir_fd)
    return messages.create_ok(path)


def _occurrence_lines(text: str, needle: str) -> list[int]:
    found: list[int] = []
    pos = text.find(needle)
    while pos != -1:
        line = text.count("\n", 0, pos) + 1
        if line not in found:
            found.append(line)
        pos = text.find(needle, pos + 1)
    return found


def _str_replace(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "str_replace", "path")
    old = _str_param(inp, "str_replace", "old_str")
    new = _str_param(inp, "str_replace", "new_str", required=False, default="")
    if old == "":
        raise _Fail(messages.bad_param("str_replace", "old_str", "a non-empty string"))
    t = _guard(ctx.root, path)
    _confirm(ctx, "str_replace", path, f"str_replace in {path}")
    text, st = _read_text(t, missing=messages.not_found(path))
    count = text.count(old)
    if count == 0:
        raise _Fail(messages.no_match(old, path))
    if count > 1:
        raise _Fail(messages.multiple(old, _occurrence_lines(text, old)))
    pos = text.find(old)
    new_text = text[:pos] + new + text[pos + len(old) :]
    _commit(t, st, text, new_text, ctx)
    changed = text.count("\n", 0, pos) + 1
    lines = new_text.split("\n")
    first = max(1, changed - SNIPPET_LINES)
    last = changed + SNIPPET_LINES + new.count("\n")
    return messages.STR_REPLACE_OK_HEADER + number_lines(lines[first - 1 : last], first)


def _insert(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "insert", "path")
    n = _int_param(inp, "insert", "insert_line")
    insert_text = _str_param(inp, "insert", "insert_text")
    t = _guard(ctx.root, path)
    _confirm(ctx, "insert", path, f"insert into {path} at line {n}")
    text, st = _read_text(t, missing=messages.not_found(path))
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if n < 0 or n > len(lines):
        raise _Fail(messages.bad_insert_line(n, len(lines)))
    piece = insert_text[:-1] if insert_text.endswith("\n") else insert_text
    new_lines = lines[:n] + [piece] + lines[n:]
    _commit(t, st, text, "\n".join(new_lines) + "\n", ctx)
    return messages.insert_ok(path)


def _delete(inp: dict, ctx: ToolContext) -> str:
    path = _str_param(inp, "delete", "path")
    t = _guard(ctx.root, path)
    if t.is_root:
        raise _Fail(messages.DELETE_ROOT)
    _confirm(ctx, "delete", path, f"delete {path}")
    if not os.path.lexists(t.lexical):
        raise _Fail(messages.delete_missing(path))
    _before_write(t.lexical)
    place = t.entry
    dir_fd = _open_place_dir(t, place.dir_parts, "delete")
    try:
        remove_at(dir_fd, place.name)
    except FileNotFoundError:
        raise _Fail(messages.vanished(path)) from None
    except OSError:
        raise _Fail(messages.os_error(path, "delete")) from None
    finally:
        os.close(dir_fd)
    return messages.delete_ok(path)


def _rename(inp: dict, ctx: ToolContext) -> str:
    old_path = _str_param(inp, "rename", "old_path")
    new_path = _str_param(inp, "rename", "new_path")
    old = _guard(ctx.root, old_path)
    if old.is_root:
        raise _Fail(messages.RENAME_ROOT)
    new = _guard(ctx.root, new_path)
    _confirm(ctx, "rename", old_path, f"rename {old_path} to {new_path}")
    if not os.path.lexists(old.lexical):
        raise _Fail(messages.rename_missing(old_path))
    if new.is_root or os.path.lexists(new.lexical):
        raise _Fail(messages.rename_exists(new_path))
    both = f"{old_path} to {new_path}"
    src, dst = old.entry, new.content
    src_parts = (*src.dir_parts, src.name)
    if (*dst.dir_parts, dst.name)[
        : len(src_parts)
    ] == src_parts:  # into its own subtree: refuse before creating anything
        raise _Fail(messages.os_error(both, "rename"))
    _before_write(old.lexical)
    src_fd = _open_place_dir(old, src.dir_parts, "rename")
    try:
        dst_fd = _open_place_dir(new, dst.dir_parts, "rename", create=True)
        try:
            rename_at(src_fd, src.name, dst_fd, dst.name)
        except FileExistsError:
            raise _Fail(messages.rename_exists(new_path)) from None
        except FileNotFoundError:
            raise _Fail(messages.vanished(old_path)) from None
        except OSError:
            raise _Fail(messages.os_error(both, "rename")) from None
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)
    return messages.rename_ok(old_path, new_path)


_HANDLERS: dict[str, Callable[[dict, ToolContext], str]] = {
    "view": _view,
    "create": _create,
    "str_replace": _str_replace,
    "insert": _insert,
    "delete": _delete,
    "rename": _rename,
}


def _confirm(ctx: ToolContext, command: str, path: str, description: str) -> None:
    if ctx.mode != "strict":
        return
    ok = False
    if ctx.confirm is not None:
        try:
            ok = bool(ctx.confirm(description))
        except Exception:
            ok = False
    if not ok:
        raise _Fail(messages.declined(command, path))


def _audit_paths(inp: dict) -> list[str]:
    return [v for k in ("path", "old_path", "new_path") if isinstance(v := inp.get(k), str)]


def run_tool(input: dict, ctx: ToolContext) -> ToolResult:  # noqa: A002 - the tool's own name
    """Run one tool call. Never raises: every failure is an is_error result naming virtual paths only."""
    if not ctx.enabled:
        return ToolResult(messages.disabled(ctx.disabled_by), True)
    if not isinstance(input, dict):
        return ToolResult(messages.bad_param("memory", "input", "an object"), True)
    command = input.get("command")
    if not isinstance(command, str) or command not in _HANDLERS:
        return ToolResult(messages.unknown_command(command), True)
    mutation = command in MUTATIONS
    try:
        if mutation and ctx.mode == "plan":
            raise _Fail(messages.plan_mode(command))
        result = ToolResult(_HANDLERS[command](input, ctx), False)
    except _Fail as exc:
        result = ToolResult(exc.message, True)
    except Exception:
        result = ToolResult(f"The {command} command failed on the memory store", True)
    if mutation:
        audit.record(ctx.root, command, _audit_paths(input), "error" if result.is_error else "ok")
    return result


def run(
    root: Path | str,
    workspaces: str | Sequence[str] | None,
    input: dict,
    *,  # noqa: A002
    mode: str = "auto",
    confirm: Callable[[str], bool] | None = None,
    enabled: bool = True,
    disabled_by: str | None = None,
    editor: Editor | None = None,
) -> dict:
    """One tool call → ``{"content", "isError"}`` (see the module docstring)."""
    if isinstance(workspaces, str) or workspaces is None:
        workspace = workspaces or None
    else:
        workspace = next((w for w in workspaces if w), None)
    ctx = ToolContext(
        root=Path(root),
        workspace=workspace,
        mode=mode if mode in MODES else "auto",
        enabled=enabled,
        disabled_by=disabled_by,
        confirm=confirm,
        editor=editor,
    )
    result = run_tool(input, ctx)
    return {"content": result.content, "isError": result.is_error}
